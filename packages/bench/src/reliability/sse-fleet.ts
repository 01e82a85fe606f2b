import { type BackoffOptions, sseTransport, type TransportStats } from '@rdf-stream/client';
import { parseElementId } from '@rdf-stream/protocol';
import { Agent, fetch as undiciFetch } from 'undici';

/** One subscriber of the fleet: what it received, as a real client would see it. */
export interface FleetSubscriber {
  readonly index: number;
  /** Sequence numbers received, each once. */
  readonly seqs: Set<number>;
  /** Elements received again (already in `seqs`). */
  duplicates: number;
  /** `gap` events received (elements the publisher said it could not replay). */
  gaps: number;
  /** First and last sequence numbers received (0: none yet). */
  firstSeq: number;
  lastSeq: number;
  /** The last element id received: where a restarted subscription resumes. */
  lastEventId: string | undefined;
  /** Connections lost and retried by the transport, and subscriptions restarted by `restart`. */
  readonly stats: TransportStats;
  restarts: number;
  controller: AbortController;
}

export interface SseFleetOptions {
  /** The stream's `…/events` URL, or each subscriber's (e.g. through its own relay). */
  readonly eventsUrl: string | ((index: number) => string);
  readonly subscribers: number;
  /** Connections opened per second while the fleet starts (a crowd arriving, not a SYN flood). */
  readonly connectRatePerSecond?: number;
  readonly backoff?: BackoffOptions;
  /** Where every subscriber starts (sent as `Last-Event-ID`); default: live, from the next element. */
  readonly lastEventId?: string;
  /** Called for every element received (after bookkeeping), e.g. to measure latency. */
  readonly onElement?: (subscriber: FleetSubscriber, seq: number, text: string, receivedAt: number) => void;
}


/**
 * A fleet of SSE subscribers driving the client library's own transport (`sseTransport`: the
 * reconnection, `Last-Event-ID`, `retry:` and backoff users get), over undici, without decoding
 * RDF. It keeps, per subscriber, every sequence number received, so that a scenario can count
 * what was missed or received twice.
 */
export class SseFleet {
  readonly subscribers: FleetSubscriber[] = [];
  /** Every reconnection the transports scheduled: when (performance.now()) and after how long. */
  readonly reconnections: Array<{ readonly atMs: number; readonly delayMs: number }> = [];
  readonly #options: SseFleetOptions;
  readonly #agent = new Agent({ connections: null, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 0 });
  readonly #fetch = ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: this.#agent } as Parameters<typeof undiciFetch>[1])) as unknown as typeof fetch;
  readonly #waiters = new Set<{ readonly seq: number; remaining: number; readonly resolve: () => void }>();
  #stopped = false;

  constructor(options: SseFleetOptions) {
    this.#options = options;
  }

  /** Opens every subscription, at `connectRatePerSecond`. */
  async start(): Promise<void> {
    const rate = this.#options.connectRatePerSecond ?? 2_000;
    for (let index = 0; index < this.#options.subscribers; index++) {
      const subscriber: FleetSubscriber = {
        index,
        seqs: new Set(),
        duplicates: 0,
        gaps: 0,
        firstSeq: 0,
        lastSeq: 0,
        lastEventId: this.#options.lastEventId,
        stats: { requests: 0, notModified: 0, elements: 0, reconnects: 0 },
        restarts: 0,
        controller: new AbortController(),
      };
      this.subscribers.push(subscriber);
      void this.#run(subscriber);
      if ((index + 1) % Math.max(1, Math.round(rate / 20)) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Resolves once every subscriber has received element `seq` (or a later one), or rejects after `timeoutMs`. */
  reached(seq: number, timeoutMs: number): Promise<void> {
    const remaining = this.#lagging(seq);
    if (remaining === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { seq, remaining, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`${this.#lagging(seq)} of ${this.subscribers.length} subscribers had not received element ${seq} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Gives up a subscription and subscribes again from its last id, as an application restarting would. */
  restart(subscriber: FleetSubscriber): void {
    subscriber.controller.abort();
    subscriber.restarts++;
    subscriber.controller = new AbortController();
    void this.#run(subscriber);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const subscriber of this.subscribers) subscriber.controller.abort();
    // destroy, not close: close waits for every open response, and an SSE stream never ends.
    await this.#agent.destroy().catch(() => undefined);
  }

  /**
   * Per subscriber, the elements from the first it received to `lastSeq` it did not receive, and
   * those it received twice; summed over the fleet.
   */
  losses(lastSeq: number): { missing: number; duplicates: number; gaps: number; subscribersWithLoss: number; neverReceived: number } {
    let missing = 0;
    let duplicates = 0;
    let gaps = 0;
    let subscribersWithLoss = 0;
    let neverReceived = 0;
    for (const subscriber of this.subscribers) {
      if (subscriber.firstSeq === 0) {
        neverReceived++;
        continue;
      }
      let own = 0;
      for (let seq = subscriber.firstSeq; seq <= lastSeq; seq++) if (!subscriber.seqs.has(seq)) own++;
      missing += own;
      duplicates += subscriber.duplicates;
      gaps += subscriber.gaps;
      if (own > 0 || subscriber.duplicates > 0) subscribersWithLoss++;
    }
    return { missing, duplicates, gaps, subscribersWithLoss, neverReceived };
  }

  #lagging(seq: number): number {
    return this.subscribers.filter((subscriber) => subscriber.lastSeq < seq).length;
  }

  async #run(subscriber: FleetSubscriber): Promise<void> {
    const { signal } = subscriber.controller;
    try {
      const { eventsUrl } = this.#options;
      for await (const event of sseTransport(typeof eventsUrl === 'string' ? eventsUrl : eventsUrl(subscriber.index), {
        format: 'ntriples',
        backoff: this.#options.backoff ?? { initialDelayMs: 1_000, maxDelayMs: 10_000 },
        maxEventBytes: 16 * 1024 * 1024,
        stats: subscriber.stats,
        signal,
        fetch: this.#fetch,
        ...(subscriber.lastEventId === undefined ? {} : { lastEventId: subscriber.lastEventId }),
      })) {
        if (event.type === 'gap') subscriber.gaps++;
        if (event.type === 'reconnect') this.reconnections.push({ atMs: performance.now(), delayMs: event.delayMs });
        const id = event.type === 'element' && event.id !== undefined ? parseElementId(event.id) : undefined;
        if (event.type !== 'element' || id === undefined) continue;
        const { seq } = id;
        subscriber.lastEventId = event.id;
        if (subscriber.seqs.has(seq)) subscriber.duplicates++;
        else subscriber.seqs.add(seq);
        if (subscriber.firstSeq === 0) subscriber.firstSeq = seq;
        if (seq > subscriber.lastSeq) {
          this.#advanced(subscriber.lastSeq, seq);
          subscriber.lastSeq = seq;
        }
        this.#options.onElement?.(subscriber, seq, event.text, event.receivedAt);
      }
    } catch (error) {
      if (!signal.aborted && !this.#stopped) throw error;
    }
  }

  /** A subscriber's last sequence number went from `from` to `to`: count it for the waiters it passed. */
  #advanced(from: number, to: number): void {
    for (const waiter of this.#waiters) {
      if (from < waiter.seq && to >= waiter.seq && --waiter.remaining === 0) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }
}
