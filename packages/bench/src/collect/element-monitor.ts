import { streamEvents } from '@rdf-stream/client';
import { elementStamp } from '../fleet/timestamp.js';

/**
 * Follows the stream over SSE to know every element published and when it was generated: the
 * expected updates of the run. It is the client library's SSE transport, so a dropped
 * connection is resumed with `Last-Event-ID` and nothing published meanwhile goes uncounted.
 */
export class ElementMonitor {
  readonly published = new Map<number, number>();
  /** Connections lost and resumed while the run went on. */
  reconnects = 0;
  readonly #stopping = new AbortController();
  readonly #onElement: ((text: string) => void) | undefined;

  /** `onElement` is given each element's text as it arrives (the peer run relays it). */
  constructor(onElement?: (text: string) => void) {
    this.#onElement = onElement;
  }

  /** Resolves once the stream is open; rejects if the publisher refuses it (4xx). */
  start(streamUrl: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
        const response = await fetch(input, init);
        if (response.ok) resolve();
        return response;
      }) as typeof fetch;
      void (async () => {
        for await (const event of streamEvents(streamUrl, 'sse', { format: 'turtle', signal: this.#stopping.signal, fetch: fetchImpl })) {
          if (event.type === 'element') {
            const stamp = elementStamp(event.text);
            if (stamp) this.published.set(stamp.seq, stamp.generatedAtMs);
            this.#onElement?.(event.text);
          } else if (event.type === 'reconnect') this.reconnects++;
        }
      })().catch(reject);
    });
  }

  stop(): void {
    this.#stopping.abort();
  }
}
