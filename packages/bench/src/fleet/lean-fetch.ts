import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { EVENT_STREAM_MEDIA_TYPE } from '@rdf-stream/protocol';

export interface LeanFetchOptions {
  /** Longest wait for a response's headers, and for the whole body of a response that is not an event stream (ms). */
  readonly timeoutMs: number;
  /** Called for each request given up on `timeoutMs`. */
  readonly onTimeout?: () => void;
}

/** Errors of a kept-alive connection the server had closed meanwhile: the request is sent again, once. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/** Statuses whose responses have no body (a WHATWG Response refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The `fetch` the client library's transports take (GET only), over one undici dispatcher (a
 * `Pool` or a `Client`, whose options say the origin, connections and source address), for
 * fleets of thousands of such transports (the soak's pollers): undici's `fetch` costs several
 * times `request` per request, and a fleet shares two cores with the publisher.
 * As browsers do, it sends a request again once when a kept-alive connection turns
 * out to have been closed. An event stream's body is streamed (a WHATWG `Response`); any other
 * body is read whole (within `timeoutMs`) and handed over as a `LeanResponse`.
 */
export function leanFetch(dispatcher: Dispatcher, options: LeanFetchOptions): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers = (init?.headers ?? {}) as Record<string, string>;
    const eventStream = headers.accept === EVENT_STREAM_MEDIA_TYPE;
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await dispatcher.request({
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers,
          // Only a stream needs its signal: a whole-body request ends within `timeoutMs`, and a
          // listener added and removed per request is a cost thousands of pollers notice.
          signal: eventStream ? (init?.signal ?? undefined) : undefined,
          headersTimeout: options.timeoutMs,
          // EventSource has no body timeout either: heartbeats keep an idle stream open.
          bodyTimeout: eventStream ? 0 : options.timeoutMs,
        });
        const responseHeaders = new LeanHeaders(answer.headers);
        if (NULL_BODY_STATUSES.has(answer.statusCode)) {
          answer.body.resume();
          return new LeanResponse(answer.statusCode, responseHeaders, '') as unknown as Response;
        }
        if ((responseHeaders.get('content-type') ?? '').startsWith(EVENT_STREAM_MEDIA_TYPE)) {
          // A real Response: the SSE transport pipes its body through a TextDecoderStream.
          return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, { status: answer.statusCode, headers: [...responseHeaders] });
        }
        return new LeanResponse(answer.statusCode, responseHeaders, await answer.body.text()) as unknown as Response;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (TIMEOUTS.has(code)) options.onTimeout?.();
        if (attempt > 0 || !STALE_CONNECTION.has(code) || init?.signal?.aborted) throw error;
      }
    }
  }) as typeof fetch;
}

/**
 * Response headers as the transports read them (`get`, and iteration into a plain object for
 * the poll session's cache), over undici's record of lower-case names without copying it into a
 * WHATWG `Headers`.
 */
class LeanHeaders {
  readonly #record: Record<string, string | string[] | undefined>;

  constructor(record: Record<string, string | string[] | undefined>) {
    this.#record = record;
  }

  get(name: string): string | null {
    const value = this.#record[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }

  *[Symbol.iterator](): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.#record)) {
      const value = this.get(name);
      if (value !== null) yield [name, value];
    }
  }
}

/**
 * The parts of a `Response` the client's transports read of a whole body: `status`, `ok`,
 * `headers`, `text()`, `json()`, and a `body` of null (nothing left to cancel). A WHATWG
 * `Response` wraps even a string in a ReadableStream and its headers in a `Headers`: at a
 * thousand polls a second those allocations were the fleet's largest cost after undici itself.
 */
class LeanResponse {
  readonly body = null;

  constructor(
    readonly status: number,
    readonly headers: LeanHeaders,
    readonly bodyText: string,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  text(): Promise<string> {
    return Promise.resolve(this.bodyText);
  }

  json(): Promise<unknown> {
    return Promise.resolve().then(() => JSON.parse(this.bodyText) as unknown);
  }
}
