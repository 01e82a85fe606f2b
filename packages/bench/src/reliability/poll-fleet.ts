import { pollTransport, type TransportStats } from '@rdf-stream/client';
import { Client } from 'undici';
import { leanFetch } from '../fleet/lean-fetch.js';

/** Longest wait for a poll's answer (ms). */
const POLL_TIMEOUT_MS = 30_000;

/**
 * A fleet of polling clients driving the client library's own `pollTransport` (fixed interval,
 * conditional requests, jitter), over undici, without decoding RDF.
 */
export class PollFleet {
  readonly stats: TransportStats = { requests: 0, notModified: 0, elements: 0, reconnects: 0 };
  /**
   * One controller per poller, not one for the fleet: every wait adds and removes a listener on
   * its signal, and an AbortSignal's listeners are a list searched on each add and remove —
   * thousands of pollers on one signal made the fleet quadratic and starved it of CPU.
   */
  readonly #controllers: AbortController[] = [];
  readonly #connections: Client[] = [];

  constructor(
    readonly latestUrl: string,
    readonly pollers: number,
    readonly pollIntervalMs: number,
  ) {}

  async start(): Promise<void> {
    for (let index = 0; index < this.pollers; index++) {
      const controller = new AbortController();
      this.#controllers.push(controller);
      // One keep-alive connection per poller, as a browser holds one: the publisher's open
      // files then count the pollers, not how busy a shared pool happened to be.
      const connection = new Client(new URL(this.latestUrl).origin, { pipelining: 1, keepAliveTimeout: 60_000 });
      this.#connections.push(connection);
      void this.#run(controller.signal, leanFetch(connection, { timeoutMs: POLL_TIMEOUT_MS }));
      if (index % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    for (const controller of this.#controllers) controller.abort();
    // destroy, not close: close would wait for the polls in flight.
    await Promise.all(this.#connections.map((connection) => connection.destroy().catch(() => undefined)));
  }

  async #run(signal: AbortSignal, fetchImpl: typeof fetch): Promise<void> {
    try {
      for await (const _event of pollTransport(this.latestUrl, {
        format: 'turtle',
        strategy: 'fixed',
        pollIntervalMs: this.pollIntervalMs,
        jitterMs: this.pollIntervalMs,
        minPollIntervalMs: 100,
        backoff: { initialDelayMs: 1_000, maxDelayMs: 10_000 },
        stats: this.stats,
        signal,
        fetch: fetchImpl,
      })) {
        // Counted in `stats`; the soak measures the publisher, not the payloads.
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }
}
