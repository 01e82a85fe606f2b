import { pollTransport, type TransportStats } from '@rdf-stream/client';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * A fleet of polling clients driving the client library's own `pollTransport` (fixed interval,
 * conditional requests, jitter), over undici, without decoding RDF.
 */
export class PollFleet {
  readonly stats: TransportStats = { requests: 0, notModified: 0, elements: 0, reconnects: 0 };
  readonly #controller = new AbortController();
  readonly #agent = new Agent({ connections: null, keepAliveTimeout: 60_000 });
  readonly #fetch = ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: this.#agent } as Parameters<typeof undiciFetch>[1])) as unknown as typeof fetch;

  constructor(
    readonly latestUrl: string,
    readonly pollers: number,
    readonly pollIntervalMs: number,
  ) {}

  async start(): Promise<void> {
    for (let index = 0; index < this.pollers; index++) {
      void this.#run();
      if (index % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    // destroy, not close: close waits for every open response, and an SSE stream never ends.
    await this.#agent.destroy().catch(() => undefined);
  }

  async #run(): Promise<void> {
    try {
      for await (const _event of pollTransport(this.latestUrl, {
        format: 'turtle',
        strategy: 'fixed',
        pollIntervalMs: this.pollIntervalMs,
        jitterMs: this.pollIntervalMs,
        minPollIntervalMs: 100,
        backoff: { initialDelayMs: 1_000, maxDelayMs: 10_000 },
        stats: this.stats,
        signal: this.#controller.signal,
        fetch: this.#fetch,
      })) {
        // Counted in `stats`; the soak measures the publisher, not the payloads.
      }
    } catch (error) {
      if (!this.#controller.signal.aborted) throw error;
    }
  }
}
