import { parse as parseCsv } from 'csv-parse/sync';
import type { Observation } from '../model/observation.js';
import type { ElementSource, ObservationSink, SourceHealth, SourceState } from './element-source.js';
import { type CompiledMapping, compileMapping, logRejections, mapRecords, type RecordMapping, recordsOf } from './record-mapping.js';
import type { Logger } from '../clock-and-logger.js';

export interface WebApiSourceOptions {
  readonly url: string;
  /** Default: from the response's Content-Type (`text/csv` is CSV, anything else JSON). */
  readonly format?: 'json' | 'csv';
  readonly pollIntervalMs: number;
  /** Per request, body included. */
  readonly timeoutMs: number;
  /** A bigger response body is an upstream error. */
  readonly maxBodyBytes: number;
  /** Delays after failures: exponential from `initialMs` up to `maxMs`, with jitter. */
  readonly retry: { readonly initialMs: number; readonly maxMs: number };
  readonly headers?: Readonly<Record<string, string>>;
  readonly mapping: RecordMapping;
  /**
   * A state source (`identity: state`): the resource is the current state of things, and each
   * thing's observation is named `{stateIriBase}{id}` in every element. Its `resultTime` (unless
   * the mapping reads one) is when its result was first seen, kept while the result is unchanged,
   * so that consecutive elements differ only in the triples of the things that changed.
   */
  readonly stateIriBase?: string;
  readonly logger: Logger;
}

/** A failed poll; `message` goes to `/health`, so it never holds header values or the query string. */
class UpstreamError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** A longer `Retry-After` is cut to this, and `setTimeout` cannot wait more than 2^31-1 ms anyway. */
const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds from now. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/**
 * Why `fetch` failed: a timeout, or the network error under undici's "fetch failed". Errors
 * without such a cause are not quoted: they can repeat a header value (an invalid token).
 */
function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return `request timed out after ${timeoutMs} ms`;
  const cause = error instanceof Error ? error.cause : undefined;
  if (!(cause instanceof Error)) return 'the request could not be sent (check the URL and the headers)';
  const code = (cause as { code?: unknown }).code;
  return `request failed: ${typeof code === 'string' ? code : cause.message}`;
}

/** Reads the body, giving up as soon as it exceeds `maxBytes` (a wrong Content-Length cannot get around it). */
async function readBody(response: Response, maxBytes: number): Promise<string> {
  const tooBig = () => new UpstreamError(`response body exceeds the limit of ${maxBytes} bytes`);
  const declared = Number(response.headers.get('content-length'));
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw tooBig();
  }
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooBig();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function parseDocument(text: string, format: 'json' | 'csv'): unknown {
  try {
    return format === 'csv' ? parseCsv(text, { columns: true, skip_empty_lines: true }) : JSON.parse(text);
  } catch (error) {
    throw new UpstreamError(`unparseable ${format.toUpperCase()} document: ${(error as Error).message}`);
  }
}

/** One run of the source, from start to stop. */
interface Run {
  readonly sink: ObservationSink;
}

/** Compares batches by content: the same records give the same text, whatever objects hold them. */
function canonical(observations: readonly Observation[]): string {
  return JSON.stringify(
    observations.map((o) => [
      o.id,
      o.sensor,
      o.observedProperty,
      o.featureOfInterest,
      o.simpleResult,
      o.unit ?? null,
      o.resultTime?.toISOString() ?? null,
      o.phenomenonTime?.toISOString() ?? null,
    ]),
  );
}

/**
 * Polls a JSON or CSV resource and publishes its records, mapped to observations, whenever
 * they change. Requests are conditional (ETag, Last-Modified) so that an unchanged resource
 * costs a 304; an upstream failure degrades the source and is retried with backoff while the
 * stream keeps its last element.
 */
export class WebApiSource implements ElementSource {
  readonly kind = 'web-api';
  readonly expectedIntervalMs = null;
  readonly #options: WebApiSourceOptions;
  readonly #mapping: CompiledMapping;
  /** Origin and path only: the query string may hold an API key. */
  readonly #safeUrl: string;
  /** The current run (from start to stop): callbacks of an earlier run find it changed and do nothing. */
  #run: Run | undefined;
  #started = false;
  #timer: NodeJS.Timeout | undefined;
  #request: AbortController | undefined;
  #polling: Promise<void> | undefined;
  #etag: string | undefined;
  #lastModified: string | undefined;
  #lastContent: string | undefined;
  #failures = 0;
  #detail: string | undefined;
  #lastSuccessAt: string | null = null;
  #recordsRejected = 0;
  /** A state source's last published observations by id (content and result time). */
  #lastState = new Map<string, { readonly content: string; readonly resultTime: Date | undefined }>();

  /** Throws if the mapping is unusable, so that a bad configuration fails at start-up. */
  constructor(options: WebApiSourceOptions) {
    this.#mapping = compileMapping(options.mapping);
    this.#options = options;
    const url = new URL(options.url);
    this.#safeUrl = `${url.origin}${url.pathname}`;
  }

  /** Sends the first request at once, then one every `pollIntervalMs`. */
  start(sink: ObservationSink): void {
    if (this.#run !== undefined) return;
    this.#started = true;
    this.#run = { sink };
    this.#poll(this.#run);
  }

  /** Cancels the next poll and aborts a request in flight; resolves once that request has ended. */
  async stop(): Promise<void> {
    this.#run = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#request?.abort();
    await this.#polling;
  }

  health(): SourceHealth {
    const state: SourceState = this.#run === undefined ? (this.#started ? 'stopped' : 'starting') : this.#detail === undefined ? 'ok' : 'degraded';
    return {
      state,
      ...(state === 'degraded' ? { detail: this.#detail } : {}),
      lastSuccessAt: this.#lastSuccessAt,
      recordsRejected: this.#recordsRejected,
    };
  }

  #poll(run: Run): void {
    const startedAt = Date.now();
    this.#polling = this.#fetchObservations()
      .then(
        (observations) => {
          this.#recovered(run, startedAt);
          this.#publish(run, observations);
        },
        (error: unknown) => this.#failed(run, error),
      )
      // Last resort: nothing a poll does may become an unhandled rejection.
      .catch((error: unknown) => this.#options.logger.error({ err: error, url: this.#safeUrl }, 'web API source failed'));
  }

  #schedule(run: Run, delayMs: number): void {
    this.#timer = setTimeout(() => this.#poll(run), delayMs).unref();
  }

  #recovered(run: Run, startedAt: number): void {
    if (this.#run !== run) return;
    this.#lastSuccessAt = new Date().toISOString();
    if (this.#detail !== undefined) this.#options.logger.info({ url: this.#safeUrl }, 'web API upstream recovered');
    this.#failures = 0;
    this.#detail = undefined;
    this.#schedule(run, Math.max(0, startedAt + this.#options.pollIntervalMs - Date.now()));
  }

  #failed(run: Run, error: unknown): void {
    // An abort by stop() is no upstream failure.
    if (this.#run !== run) return;
    const { retry, timeoutMs, logger } = this.#options;
    const upstream = error instanceof UpstreamError ? error : new UpstreamError(describeFetchError(error, timeoutMs));
    this.#failures++;
    this.#detail = upstream.message;
    const backoffMs = Math.min(retry.maxMs, retry.initialMs * 2 ** (this.#failures - 1));
    // Equal jitter: between half and all of the backoff, so that many publishers do not retry in step.
    const delayMs = Math.max(backoffMs / 2 + Math.random() * (backoffMs / 2), upstream.retryAfterMs ?? 0);
    logger.warn(
      { url: this.#safeUrl, detail: upstream.message, failures: this.#failures, retryInMs: Math.round(delayMs) },
      'web API upstream failed',
    );
    this.#schedule(run, delayMs);
  }

  /** One request: the mapped observations, none if unchanged (304); throws on any upstream failure. */
  async #fetchObservations(): Promise<Observation[]> {
    const { url, timeoutMs, maxBodyBytes, headers, logger } = this.#options;
    const request = new AbortController();
    this.#request = request;
    try {
      const conditional = {
        ...(this.#etag === undefined ? {} : { 'if-none-match': this.#etag }),
        ...(this.#lastModified === undefined ? {} : { 'if-modified-since': this.#lastModified }),
      };
      const response = await fetch(url, {
        headers: { ...headers, ...conditional },
        signal: AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]),
      });
      if (response.status === 304) {
        await response.body?.cancel();
        return [];
      }
      if (!response.ok) {
        await response.body?.cancel();
        const limited = response.status === 429 ? ' (rate limited)' : '';
        throw new UpstreamError(`upstream answered HTTP ${response.status}${limited}`, retryAfterMs(response.headers.get('retry-after')));
      }
      const text = await readBody(response, maxBodyBytes);
      const contentType = response.headers.get('content-type') ?? '';
      const format = this.#options.format ?? (/^text\/csv\b/i.test(contentType) ? 'csv' : 'json');
      let records: unknown[];
      try {
        records = recordsOf(parseDocument(text, format), this.#mapping);
      } catch (error) {
        throw error instanceof UpstreamError ? error : new UpstreamError((error as Error).message);
      }
      const { observations, rejected } = mapRecords(records, this.#mapping);
      this.#recordsRejected += rejected.length;
      logRejections(logger, rejected, { url: this.#safeUrl });
      if (records.length > 0 && observations.length === 0) {
        throw new UpstreamError(`none of the ${records.length} records could be mapped (first: ${rejected[0]?.reason})`);
      }
      // Validators are kept only once the content is usable: a broken document is fetched again in full.
      this.#etag = response.headers.get('etag') ?? undefined;
      this.#lastModified = response.headers.get('last-modified') ?? undefined;
      return observations;
    } finally {
      if (this.#request === request) this.#request = undefined;
    }
  }

  /** Names each observation after its thing, and keeps the result time of an unchanged one. */
  #asState(observations: readonly Observation[], iriBase: string, now: Date): Observation[] {
    const state = new Map<string, { readonly content: string; readonly resultTime: Date | undefined }>();
    const named = observations.map((observation) => {
      const content = canonical([observation]);
      const previous = this.#lastState.get(observation.id);
      const resultTime = observation.resultTime ?? (previous?.content === content ? previous.resultTime : now);
      state.set(observation.id, { content, resultTime });
      return { ...observation, iri: `${iriBase}${observation.id}`, ...(resultTime === undefined ? {} : { resultTime }) };
    });
    this.#lastState = state;
    return named;
  }

  /** Publishes only content that differs from the last element: unchanged data makes no element. */
  #publish(run: Run, observations: Observation[]): void {
    if (this.#run !== run || observations.length === 0) return;
    const content = canonical(observations);
    if (content === this.#lastContent) return;
    this.#lastContent = content;
    const generatedAt = new Date();
    try {
      run.sink(this.#options.stateIriBase === undefined ? observations : this.#asState(observations, this.#options.stateIriBase, generatedAt), generatedAt);
    } catch (error) {
      // The publisher's fault, not the upstream's: logged, and the source goes on polling.
      this.#options.logger.error({ err: error, url: this.#safeUrl }, 'publishing an element failed');
    }
  }
}
