import type { Worker } from 'node:worker_threads';
import type { Quad } from '@rdfjs/types';
import { DataFactory, Writer } from 'n3';
import { startWorkerThread, workerModuleUrl } from '../worker-thread.js';
import type { ShapeReport } from './shape-validator.js';

/** Thrown by `validate` when `maxPending` validations are already waiting for the worker. */
export class ValidationQueueFullError extends Error {
  override readonly name = 'ValidationQueueFullError';
}

type Reply = { readonly id: number; readonly report: ShapeReport } | { readonly id: number; readonly error: string };
type Ready = { readonly ready: true } | { readonly ready: false; readonly error: string };

/**
 * SHACL validation in a worker thread: about 12 ms of CPU for a 100-observation element, which
 * on the event loop would delay every poll and broadcast of every stream. The element goes to
 * the worker as N-Triples (~1 ms to write); at most `maxPending` validations wait at once.
 * A worker that dies fails what it held and is started again on the next validation.
 */
export class ThreadedShapeValidator {
  readonly #shapesFile: string;
  readonly #maxPending: number;
  readonly #pending = new Map<
    number,
    { readonly thread: Worker; readonly resolve: (report: ShapeReport) => void; readonly reject: (error: Error) => void }
  >();
  #worker: { thread: Worker; ready: Promise<void> } | undefined;
  #nextId = 0;

  constructor(shapesFile: string, maxPending: number) {
    this.#shapesFile = shapesFile;
    this.#maxPending = maxPending;
  }

  /** Starts the worker and compiles the shapes: a broken shapes file fails here, at start-up. */
  async load(): Promise<void> {
    await this.#started().ready;
  }

  async validate(quads: Iterable<Quad>): Promise<ShapeReport> {
    if (this.#pending.size >= this.#maxPending) {
      throw new ValidationQueueFullError(`${this.#maxPending} validations are already waiting`);
    }
    const { thread, ready } = this.#started();
    const id = this.#nextId++;
    const reply = new Promise<ShapeReport>((resolve, reject) => this.#pending.set(id, { thread, resolve, reject }));
    const ntriples = toNTriples(quads);
    await ready;
    thread.postMessage({ id, ntriples });
    return reply;
  }

  /** Stops the worker (shutdown); later validations start a new one. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.thread.terminate();
  }

  #started(): { thread: Worker; ready: Promise<void> } {
    if (this.#worker !== undefined) return this.#worker;
    const thread = startWorkerThread(workerModuleUrl('shape-worker', import.meta.url), { workerData: { shapesFile: this.#shapesFile } });
    thread.unref();
    const ready = new Promise<void>((resolve, reject) => {
      thread.once('message', (message: Ready) => {
        if (message.ready) resolve();
        else reject(new Error(`SHACL shapes ${this.#shapesFile}: ${message.error}`));
      });
      thread.once('error', reject);
    });
    // Callers await `ready` (or a reply); an unobserved failure must not become unhandled.
    ready.catch(() => undefined);
    thread.on('message', (message: Reply | Ready) => {
      if (!('id' in message)) return;
      const waiter = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if ('report' in message) waiter?.resolve(message.report);
      else waiter?.reject(new Error(message.error));
    });
    thread.once('exit', (code) => {
      if (this.#worker?.thread === thread) this.#worker = undefined;
      for (const [id, waiter] of this.#pending) {
        if (waiter.thread !== thread) continue;
        this.#pending.delete(id);
        waiter.reject(new Error(`the SHACL worker exited (code ${code})`));
      }
    });
    this.#worker = { thread, ready };
    return this.#worker;
  }
}

function toNTriples(quads: Iterable<Quad>): string {
  const writer = new Writer({ format: 'N-Triples' });
  const { quad, defaultGraph } = DataFactory;
  for (const q of quads) writer.addQuad(quad(q.subject, q.predicate, q.object, defaultGraph()));
  let text = '';
  writer.end((error, result) => {
    if (error) throw error;
    text = result;
  });
  return text;
}
