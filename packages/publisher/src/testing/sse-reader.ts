import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type { EventSourceMessage } from 'eventsource-parser';

export interface SseConnection {
  readonly response: IncomingMessage;
  readonly events: EventSourceMessage[];
  readonly comments: string[];
  readonly retries: number[];
  /** The body as it came off the wire (compressed, with `Content-Encoding: gzip`). */
  readonly wire: Buffer[];
  /** Resolves once `count` events have arrived in total (rejects if the stream ends first). */
  waitForEvents(count: number): Promise<EventSourceMessage[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens an SSE stream with node:http and parses it as a browser would (eventsource-parser),
 * decoding a gzip body as it arrives. Resolves once the response headers arrived, whatever the
 * status; `headers` are sent as given (`Last-Event-ID`, `Accept-Encoding`).
 */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(url, { headers: { accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (response) => {
      const events: EventSourceMessage[] = [];
      const comments: string[] = [];
      const retries: number[] = [];
      const waiters: Array<() => void> = [];
      let done = false;
      const parser = createParser({
        onEvent: (event) => {
          events.push(event);
          for (const wake of waiters.splice(0)) wake();
        },
        onComment: (comment) => {
          comments.push(comment);
          for (const wake of waiters.splice(0)) wake();
        },
        onRetry: (retry) => retries.push(retry),
      });
      const wire: Buffer[] = [];
      response.on('data', (chunk: Buffer) => void wire.push(chunk));
      const body = response.headers['content-encoding'] === 'gzip' ? response.pipe(createGunzip()) : response;
      body.setEncoding('utf8');
      body.on('data', (chunk: string) => parser.feed(chunk));
      const ended = new Promise<void>((resolveEnd) => {
        const finish = () => {
          done = true;
          for (const wake of waiters.splice(0)) wake();
          resolveEnd();
        };
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', finish);
      });
      const until = (ready: () => boolean, what: string) =>
        new Promise<void>((resolveWait, rejectWait) => {
          const check = () => {
            if (ready()) resolveWait();
            else if (done) rejectWait(new Error(`stream ended before ${what}`));
            else waiters.push(check);
          };
          check();
        });
      resolve({
        response,
        events,
        comments,
        retries,
        wire,
        ended,
        async waitForEvents(count) {
          await until(() => events.length >= count, `${count} events (got ${events.length})`);
          return events.slice(0, count);
        },
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}

/** Ids (`{epoch}-{seq}`) of element events (those without an event name). */
export const elementIds = (events: readonly EventSourceMessage[]) =>
  events.filter((event) => event.event === undefined).map((event) => event.id);
