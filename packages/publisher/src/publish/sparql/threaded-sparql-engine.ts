import type { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { LoggedElement } from '../../model/stream-element.js';
import type { ResultMediaTypes } from '../../render/sparql-result-formats.js';
import { startWorkerThread, workerModuleUrl } from '../../worker-thread.js';
import type { SparqlOutcome, WindowElement, WorkerMessage, WorkerOptions } from './sparql-worker-protocol.js';

export type { SparqlOutcome } from './sparql-worker-protocol.js';

/** The limits of the SPARQL endpoint (`config/defaults.ts` explains each). */
export interface SparqlEngineLimits {
  readonly sparqlTimeoutMs: number;
  readonly sparqlMaxResults: number;
  readonly sparqlMaxQueued: number;
  readonly sparqlMaxElements: number;
  readonly sparqlCacheElements: number;
  readonly sparqlCacheQuads: number;
}

/** One query over one window of one stream. */
export interface SparqlQuery {
  readonly query: string;
  readonly baseIri: string;
  /** Consecutive elements of one stream's log, oldest first (at most `sparqlMaxElements`). */
  readonly elements: readonly Pick<LoggedElement, 'streamId' | 'epoch' | 'seq' | 'graph' | 'documents'>[];
  readonly mediaTypes: ResultMediaTypes;
}

type Reply = { readonly id: number; readonly outcome: SparqlOutcome } | { readonly id: number; readonly error: string };
type Ready = { readonly ready: true } | { readonly ready: false; readonly error: string };

interface Job {
  readonly query: SparqlQuery;
  readonly resolve: (outcome: SparqlOutcome) => void;
  readonly reject: (error: Error) => void;
}

interface QueryThread {
  readonly thread: Worker;
  readonly ready: Promise<void>;
  /** The elements the thread holds parsed, as the thread's own map: it forgets only what this evicts. */
  readonly held: LRUCache<string, true>;
  /** Graphs evicted from `held` that the thread has not yet been told to forget. */
  readonly forgotten: string[];
  /** The query it evaluates, if any. */
  current: { readonly id: number; readonly settle: (result: SparqlOutcome | Error) => void } | undefined;
}

/**
 * SPARQL evaluation in a worker thread (Comunica over an n3 Store of the window), so that a
 * query never holds up the event loop that serves every subscriber. Queries run one at a time,
 * in arrival order; at most `sparqlMaxQueued` wait behind the running one (more: `busy`). One
 * that runs longer than `sparqlTimeoutMs` is stopped by terminating the thread (`timeout`); the
 * next query starts a new one. The thread is started on the first query, not before.
 *
 * Elements go to the thread as their N-Quads documents, once: the thread keeps them parsed, and
 * this side mirrors what it keeps (`sparqlCacheElements`, never fewer than a window's worth), so
 * that a later window sends only the elements the thread lacks.
 */
export class ThreadedSparqlEngine {
  readonly #limits: SparqlEngineLimits;
  readonly #queue: Job[] = [];
  #running = false;
  #worker: QueryThread | undefined;
  #nextId = 0;
  #documentsSent = 0;

  constructor(limits: SparqlEngineLimits) {
    this.#limits = limits;
  }

  /** Element documents sent to the thread to parse since it first started: what `sparqlCacheElements` saves. */
  get documentsSent(): number {
    return this.#documentsSent;
  }

  /** Queries waiting behind the running one. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Evaluates `query`; rejects only if the thread fails (cannot start, dies on its own). */
  evaluate(query: SparqlQuery): Promise<SparqlOutcome> {
    if (this.#running && this.#queue.length >= this.#limits.sparqlMaxQueued) {
      return Promise.resolve({ kind: 'busy', maxQueued: this.#limits.sparqlMaxQueued });
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ query, resolve, reject });
      this.#pump();
    });
  }

  /** Stops the thread (shutdown); queries still waiting are refused as `busy`. */
  async close(): Promise<void> {
    for (const job of this.#queue.splice(0)) job.resolve({ kind: 'busy', maxQueued: this.#limits.sparqlMaxQueued });
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.thread.terminate();
  }

  #pump(): void {
    if (this.#running) return;
    const job = this.#queue.shift();
    if (job === undefined) return;
    this.#running = true;
    this.#run(job.query)
      .then(job.resolve, job.reject)
      .finally(() => {
        this.#running = false;
        this.#pump();
      });
  }

  async #run(query: SparqlQuery): Promise<SparqlOutcome> {
    const worker = this.#started();
    await worker.ready;
    const elements = this.#windowElements(worker, query);
    const transfer = elements.flatMap(({ nquads }) => (nquads === undefined ? [] : [nquads.buffer as ArrayBuffer]));
    const first = query.elements[0];
    const last = query.elements.at(-1);
    const message: WorkerMessage = {
      kind: 'query',
      id: this.#nextId++,
      query: query.query,
      baseIri: query.baseIri,
      windowKey: first === undefined || last === undefined ? '' : `${first.streamId} ${first.epoch} ${first.seq} ${last.seq}`,
      elements,
      mediaTypes: query.mediaTypes,
      maxResults: this.#limits.sparqlMaxResults,
    };
    if (worker.forgotten.length > 0) worker.thread.postMessage({ kind: 'forget', graphs: worker.forgotten.splice(0) } satisfies WorkerMessage);
    return new Promise<SparqlOutcome>((resolve, reject) => {
      const timeoutMs = this.#limits.sparqlTimeoutMs;
      const timer = setTimeout(() => {
        worker.current = undefined;
        this.#stop(worker);
        resolve({ kind: 'timeout', timeoutMs });
      }, timeoutMs);
      worker.current = {
        id: message.id,
        settle: (result) => {
          clearTimeout(timer);
          worker.current = undefined;
          if (result instanceof Error) reject(result);
          else resolve(result);
        },
      };
      worker.thread.postMessage(message, transfer);
    });
  }

  /**
   * The window's elements as the thread needs them: the graphs it holds (touched, so that they
   * are the last to be evicted), the documents of the others. The mirror holds at least a
   * window's worth, so no element of this window is evicted to make room for another of it.
   */
  #windowElements(worker: QueryThread, query: SparqlQuery): WindowElement[] {
    const held = query.elements.map((element) => worker.held.get(element.graph) === true);
    return query.elements.map((element, index) => {
      if (held[index] === true) return { graph: element.graph };
      worker.held.set(element.graph, true);
      this.#documentsSent++;
      // A copy of the document's own bytes (a Buffer may view a larger one), transferred, not cloned.
      return { graph: element.graph, nquads: Uint8Array.prototype.slice.call(element.documents.nquads) };
    });
  }

  #started(): QueryThread {
    if (this.#worker !== undefined) return this.#worker;
    const options: WorkerOptions = { cacheQuads: this.#limits.sparqlCacheQuads };
    const thread = startWorkerThread(workerModuleUrl('sparql-worker', import.meta.url), { workerData: options });
    thread.unref();
    const ready = new Promise<void>((resolve, reject) => {
      thread.once('message', (message: Ready) => {
        if (message.ready) resolve();
        else reject(new Error(`the SPARQL engine did not load: ${message.error}`));
      });
      thread.once('error', reject);
    });
    ready.catch(() => undefined);
    const forgotten: string[] = [];
    const worker: QueryThread = {
      thread,
      ready,
      forgotten,
      held: new LRUCache<string, true>({
        max: Math.max(this.#limits.sparqlCacheElements, this.#limits.sparqlMaxElements),
        dispose: (_value, graph, reason) => {
          if (reason === 'evict') forgotten.push(graph);
        },
      }),
      current: undefined,
    };
    thread.on('message', (message: Reply | Ready) => {
      if (!('id' in message) || worker.current?.id !== message.id) return;
      worker.current.settle('outcome' in message ? message.outcome : new Error(message.error));
    });
    thread.once('exit', (code) => {
      if (this.#worker === worker) this.#worker = undefined;
      worker.current?.settle(new Error(`the SPARQL worker exited (code ${code})`));
    });
    this.#worker = worker;
    return worker;
  }

  /** Terminates a thread that overran its time: what it held goes with it. */
  #stop(worker: QueryThread): void {
    if (this.#worker === worker) this.#worker = undefined;
    worker.thread.terminate().catch(() => undefined);
  }
}
