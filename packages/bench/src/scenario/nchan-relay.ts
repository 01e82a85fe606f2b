import { ElementMonitor } from '../collect/element-monitor.js';
import { elementStamp } from '../fleet/timestamp.js';
import type { PrivateNchan } from '../process/private-nchan.js';

/** The element's `prov:generatedAtTime` literal, whose lexical form the relay replaces. */
const GENERATED_AT_LITERAL = /(prov:generatedAtTime ")([^"]+)(")/;

/** The element with its `prov:generatedAtTime` set to `atMs` (the same length: an ISO 8601 time with milliseconds). */
export function restamp(turtle: string, atMs: number): string {
  return turtle.replace(GENERATED_AT_LITERAL, (_match, before: string, _time: string, after: string) => `${before}${new Date(atMs).toISOString()}${after}`);
}

/**
 * Feeds the peer the publisher's own elements: follows the publisher's stream (one SSE
 * subscriber) and publishes each element's Turtle on nchan's channel, at the publisher's
 * interval, with its `prov:generatedAtTime` set to the moment it is handed to nchan. The fleet
 * reads latency from that literal, so nchan's latency runs from its publish request to the
 * client, not from the publisher's generation; `published` is what the run accounts for.
 */
export class NchanRelay {
  /** seq → when it was handed to nchan (epoch ms). */
  readonly published = new Map<number, number>();
  /** Elements nchan refused, or that could not be sent. */
  failures = 0;
  readonly #monitor: ElementMonitor;
  /** Each publish waits for the one before: nchan receives the elements in order. */
  #queue: Promise<void> = Promise.resolve();

  constructor(nchan: PrivateNchan) {
    this.#monitor = new ElementMonitor((text) => {
      this.#queue = this.#queue.then(async () => {
        const atMs = Date.now();
        const message = restamp(text, atMs);
        const stamp = elementStamp(message);
        try {
          await nchan.publish(message);
          if (stamp !== undefined) this.published.set(stamp.seq, atMs);
        } catch {
          this.failures++;
        }
      });
    });
  }

  /** Resolves once the publisher's stream is open. */
  start(publisherStreamUrl: string): Promise<void> {
    return this.#monitor.start(publisherStreamUrl);
  }

  async stop(): Promise<void> {
    this.#monitor.stop();
    await this.#queue;
  }
}
