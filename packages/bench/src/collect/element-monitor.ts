import { request } from 'node:http';
import { EVENT_STREAM_MEDIA_TYPE } from '@rdf-stream/protocol';
import { createParser } from 'eventsource-parser';
import { elementStamp } from '../fleet/timestamp.js';

/** Follows the stream over SSE to know every element published and when it was generated. */
export class ElementMonitor {
  readonly published = new Map<number, number>();
  #stop: (() => void) | undefined;

  start(streamUrl: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(new URL(`${streamUrl}/events?format=turtle`), { headers: { accept: EVENT_STREAM_MEDIA_TYPE } }, (res) => {
        const parser = createParser({
          onEvent: (event) => {
            const stamp = elementStamp(event.data);
            if (stamp) this.published.set(stamp.seq, stamp.generatedAtMs);
          },
        });
        res.setEncoding('utf8').on('data', (chunk: string) => parser.feed(chunk));
        resolve();
      });
      req.on('error', reject);
      req.end();
      this.#stop = () => req.destroy();
    });
  }

  stop(): void {
    this.#stop?.();
  }
}
