import type { OutgoingHttpHeaders } from 'node:http';
import { exposedHeaders, type FormatName } from '@rdf-stream/protocol';
import type { PublisherConfig } from '../config/config-schema.js';
import { PublisherError } from '../errors.js';
import type { LatestElement, StreamHub } from '../publish/stream-hub.js';
import { cacheHeaders, maxAgeSeconds } from '../render/headers/cache-headers.js';
import type { Encoding } from '../render/compress.js';
import { elementNotModified } from '../render/headers/etag.js';
import { contentType } from '../render/output-formats.js';
import { acceptsIdentity, documentCodingsNotAcceptable, type NegotiationCache } from '../render/headers/negotiate.js';
import { requestedFormat } from '../render/headers/requested-format.js';
import { preferredWaitSeconds } from '../render/headers/prefer-wait.js';

/** The request headers that decide a `/latest` response. */
export interface LatestRequestHeaders {
  readonly accept?: string | undefined;
  readonly 'accept-encoding'?: string | undefined;
  readonly 'if-none-match'?: string | undefined;
  readonly 'if-modified-since'?: string | undefined;
  readonly prefer?: string | string[] | undefined;
  /** `?format=`: overrides `Accept`, as on every other route. */
  readonly format?: string | undefined;
}

export type LatestOutcome =
  | {
      readonly kind: 'send';
      readonly status: 200 | 304;
      /** Shared, frozen: never modify. */
      readonly headers: Readonly<OutgoingHttpHeaders>;
      readonly body: Buffer | undefined;
    }
  /** The client has the latest element and asked to wait for the next one (long-poll). */
  | { readonly kind: 'wait'; readonly seconds: number };

/** CORS headers for a simple GET from any origin: what @fastify/cors adds to every other response. */
export const corsHeaders = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-expose-headers': exposedHeaders.join(', '),
});

interface MemoEntry {
  seq: number;
  maxAge: number;
  expiresSecond: number;
  ok: Readonly<OutgoingHttpHeaders>;
  /** RFC 9110 §15.4.5: the validators and freshness of the 200, without the content headers. */
  notModified: Readonly<OutgoingHttpHeaders>;
}

/**
 * Decides every `/latest` response from values: negotiation, freshness, validators, long-poll.
 * The response headers of a representation change only when the element or the whole-second
 * freshness changes, so they are built once and shared until then: a poll costs a few
 * comparisons and one `writeHead`, never a serialisation or a date formatting.
 */
export class LatestResponder {
  readonly #config: PublisherConfig;
  readonly #negotiation: NegotiationCache;
  readonly #memo = new Map<string, MemoEntry>();

  constructor(config: PublisherConfig, negotiation: NegotiationCache) {
    this.#config = config;
    this.#negotiation = negotiation;
  }

  /**
   * The response to send now, or `wait` for a long-poll. Throws a `PublisherError` for a
   * request that cannot be answered (406, no element yet).
   */
  respond(hub: StreamHub, request: LatestRequestHeaders, nowMs: number, mayWait = true): LatestOutcome {
    const format = requestedFormat(request.format, request.accept, this.#negotiation);
    const latest = hub.latest;
    if (latest === undefined) {
      throw new PublisherError('PUB_ERR_NO_ELEMENT_YET', undefined, {}, { 'retry-after': '1' });
    }
    const encoding = latest.compressed
      ? this.#negotiation.encoding(request['accept-encoding'])
      : acceptsIdentity(request['accept-encoding'])
        ? 'identity'
        : undefined;
    if (encoding === undefined) throw documentCodingsNotAcceptable();
    const headers = this.#headers(hub, latest, format, encoding, nowMs);
    if (!elementNotModified(request, hub.log.epoch, latest.seq, format, latest.generatedAt.getTime())) {
      return { kind: 'send', status: 200, headers: headers.ok, body: latest.bodies[format][encoding] };
    }
    const waitSeconds = mayWait ? preferredWaitSeconds(request.prefer) : undefined;
    if (waitSeconds !== undefined && waitSeconds > 0) {
      return { kind: 'wait', seconds: Math.min(waitSeconds, this.#config.maxLongPollWaitSeconds) };
    }
    return { kind: 'send', status: 304, headers: headers.notModified, body: undefined };
  }

  #headers(hub: StreamHub, latest: LatestElement, format: FormatName, encoding: Encoding, nowMs: number): MemoEntry {
    const freshness = {
      generatedAtMs: latest.generatedAt.getTime(),
      expectedIntervalMs: hub.definition.expectedIntervalMs,
      microCacheSeconds: this.#config.microCacheSeconds,
    };
    const maxAge = maxAgeSeconds(freshness, nowMs);
    const expiresSecond = Math.floor(nowMs / 1000) + maxAge;
    const key = `${hub.definition.id}\n${format}\n${encoding}`;
    const memo = this.#memo.get(key);
    if (memo && memo.seq === latest.seq && memo.maxAge === maxAge && memo.expiresSecond === expiresSecond) {
      return memo;
    }
    const body = latest.bodies[format][encoding];
    const notModified: OutgoingHttpHeaders = {
      ...corsHeaders,
      ...cacheHeaders(freshness, nowMs),
      etag: latest.etags[format][encoding],
      vary: 'Accept, Accept-Encoding',
      link: `<${hub.definition.iri}>; rel="describedby"`,
    };
    const ok: OutgoingHttpHeaders = {
      ...notModified,
      'content-type': contentType(format),
      'content-length': String(body.length),
    };
    if (encoding !== 'identity') ok['content-encoding'] = encoding;
    const entry = { seq: latest.seq, maxAge, expiresSecond, ok: Object.freeze(ok), notModified: Object.freeze(notModified) };
    // Bounded: one entry per stream × format × coding.
    this.#memo.set(key, entry);
    return entry;
  }
}
