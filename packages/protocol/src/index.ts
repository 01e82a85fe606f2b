/**
 * The facts of the publisher's HTTP protocol (docs/protocol.md) that the publisher and its
 * clients must agree on, written once: formats and media types, the terms that date and number
 * an element, stream and element ids, the gap of a resumed stream, SSE event names, headers.
 * Values and pure functions only, and no imports, so that Node and browsers run it alike.
 */

// ── Formats ─────────────────────────────────────────────────────────────────────────────────

/** The RDF formats a publisher serves, by the name used in `?format=`, with their media types. */
export const mediaTypes = Object.freeze({
  turtle: 'text/turtle',
  trig: 'application/trig',
  ntriples: 'application/n-triples',
  nquads: 'application/n-quads',
  jsonld: 'application/ld+json',
} as const);

export type FormatName = keyof typeof mediaTypes;

/** Every format, in the order of `mediaTypes` (the order a publisher offers them in). */
export const formatNames: readonly FormatName[] = Object.freeze(Object.keys(mediaTypes) as FormatName[]);

export const isFormatName = (value: unknown): value is FormatName => typeof value === 'string' && Object.hasOwn(mediaTypes, value);

/** Media types answered and read as a format that is not theirs: plain JSON is JSON-LD. */
export const mediaTypeAliases: Readonly<Record<string, FormatName>> = Object.freeze({ 'application/json': 'jsonld' });

/** The format of a `Content-Type` header value, or undefined when it is none of ours. */
export function formatOfContentType(contentType: string | null | undefined): FormatName | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === undefined) return undefined;
  if (Object.hasOwn(mediaTypeAliases, type)) return mediaTypeAliases[type];
  return formatNames.find((format) => mediaTypes[format] === type);
}

/** Server-Sent Events (`/streams/{id}/events`). */
export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream';

/**
 * RDF Patch (Apache Jena / RDF Delta, https://afs.github.io/rdf-delta/rdf-patch.html): the data
 * of each event of `/streams/{id}/patches`, the change from one element's `/latest` to the next.
 */
export const RDF_PATCH_MEDIA_TYPE = 'application/rdf-patch';

/** The paths of a stream's event streams under `{base}/streams/{id}`: whole elements, and RDF Patch deltas. */
export const streamFeeds = Object.freeze({ events: 'events', patches: 'patches' } as const);

/**
 * Where a publisher mints skolem IRIs (RDF 1.1 §3.5) for the blank nodes of an element:
 * `{base}/.well-known/genid/{stream}/{epoch}-{seq}/{n}`, so that patches never carry blank nodes.
 */
export const GENID_PATH = '/.well-known/genid/';

/** IANA's registry of media types, whose IRIs name a distribution's `dcat:mediaType`. */
export const MEDIA_TYPE_IRI_BASE = 'https://www.iana.org/assignments/media-types/';

/** The IRI of a media type (`text/turtle` → `https://www.iana.org/assignments/media-types/text/turtle`). */
export const mediaTypeIri = (mediaType: string): string => `${MEDIA_TYPE_IRI_BASE}${mediaType}`;

/**
 * Where a publisher serves the JSON-LD context its documents are compacted against. Clients map
 * this path to their bundled copy and fetch nothing.
 */
export const CONTEXT_PATH = '/contexts/sosa-stream.jsonld';

// ── Terms ───────────────────────────────────────────────────────────────────────────────────

/** The IRIs by which a client places an element of a publisher's documents in its stream. */
export const streamTerms = Object.freeze({
  /** `prov:generatedAtTime` of an element's graph: when it was generated, on the publisher's clock. */
  generatedAtTime: 'http://www.w3.org/ns/prov#generatedAtTime',
  /** `rdf-stream:sequenceNumber` (this project's vocabulary) of a history page's member, an `xsd:integer`. */
  sequenceNumber: 'https://w3id.org/rdf-stream/vocab#sequenceNumber',
} as const);

// ── Ids ─────────────────────────────────────────────────────────────────────────────────────

/** The syntax of ids, unanchored, to build larger patterns with (a request path, an IRI). */
export const idSyntax = Object.freeze({
  /** A stream's id, in `/streams/{id}`. */
  stream: '[a-z0-9][a-z0-9-]{0,63}',
  /** A log's epoch, one life of a stream's log: never a `-`, so that `{epoch}-{seq}` splits unambiguously. */
  epoch: '[a-z0-9]{1,32}',
  /** A sequence number: 1, 2, 3, … */
  seq: '[1-9]\\d{0,15}',
});

/** A stream id, whole. */
export const STREAM_ID = new RegExp(`^${idSyntax.stream}$`);

/** A log's epoch, whole. */
export const EPOCH = new RegExp(`^${idSyntax.epoch}$`);

const ELEMENT_ID = new RegExp(`^(${idSyntax.epoch})-(${idSyntax.seq})$`);

/**
 * An element's id, `{epoch}-{seq}`: the SSE `id:`, what `Last-Event-ID` sends back and the last
 * segment of the element's IRI (`{stream}/elements/{epoch}-{seq}`). The epoch keeps ids of two
 * lives of a log (a lost or replaced data directory) apart; the sequence number is dense and
 * increasing within one.
 */
export interface ElementId {
  readonly epoch: string;
  readonly seq: number;
}

export const elementId = (epoch: string, seq: number): string => `${epoch}-${seq}`;

/** Parses an element id; undefined when `value` is not one (its sequence number a safe integer). */
export function parseElementId(value: string): ElementId | undefined {
  const match = ELEMENT_ID.exec(value);
  if (match === null) return undefined;
  const seq = Number(match[2]);
  return Number.isSafeInteger(seq) ? { epoch: match[1] as string, seq } : undefined;
}

// ── Resuming: the gap ───────────────────────────────────────────────────────────────────────

/** Why the elements after a subscriber's last id cannot all be delivered. */
export type GapReason =
  /** They are older than the log retains. */
  | 'expired'
  /** The id is newer than anything the log has made durable. */
  | 'unknown'
  /** The id comes from another life of the log (another epoch, or a bare number). */
  | 'epoch';

export const gapReasons: readonly GapReason[] = Object.freeze(['expired', 'unknown', 'epoch']);

const isGapReason = (value: unknown): value is GapReason => gapReasons.includes(value as GapReason);

/** A gap, as the publisher announces it: the id asked for, the id delivery goes on from, and why. */
export interface Gap {
  readonly requestedId: string;
  readonly oldestRetained: string;
  readonly reason: GapReason;
}

/** The response header that announces a gap when a subscriber resumes (`Stream-Gap: …`). */
export const STREAM_GAP_HEADER = 'Stream-Gap';

/** The data of the `gap` event: `{"requestedId":…,"oldestRetained":…,"reason":…}`. */
export const gapEventData = (gap: Gap): string =>
  JSON.stringify({ requestedId: gap.requestedId, oldestRetained: gap.oldestRetained, reason: gap.reason });

/** The value of `Stream-Gap`: `{reason}; requested={id}; oldest={id}`. */
export const streamGapHeaderValue = (gap: Gap): string => `${gap.reason}; requested=${gap.requestedId}; oldest=${gap.oldestRetained}`;

/**
 * Reads the data of a `gap` event, trusting nothing: an id that is not a string is undefined, a
 * reason this version does not know (or a body that is not JSON) is `unknown`.
 */
export function parseGapEventData(data: string): {
  readonly requestedId: string | undefined;
  readonly oldestRetained: string | undefined;
  readonly reason: GapReason;
} {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = undefined;
  }
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    requestedId: text(fields.requestedId),
    oldestRetained: text(fields.oldestRetained),
    reason: isGapReason(fields.reason) ? fields.reason : 'unknown',
  };
}

// ── Server-Sent Events and long-polling ─────────────────────────────────────────────────────

/**
 * The `event:` names of a stream's SSE. An element's event has none (EventSource's `message`);
 * heartbeats are comments, not events.
 */
export const sseEvents = Object.freeze({
  /** Elements were missed (data: `gapEventData`): first of a resumed stream, or when retention overtakes delivery. */
  gap: 'gap',
  /** The publisher cannot take the subscriber now: it ends the stream, to be retried after `retry:`. */
  shed: 'shed',
} as const);

// ── The data WebSocket (`GET /streams/{id}/ws`, docs/protocol.md) ──

/**
 * The kinds of message the server sends, the first word of a message's first line:
 * `element {epoch}-{seq}\n{document}` (the document exactly as SSE's `data:` payload) and
 * `gap\n{gapEventData}`. A client sends no data message.
 */
export const webSocketMessageTypes = Object.freeze({ element: 'element', gap: 'gap' } as const);

/** The close codes the publisher sends, and what a client should do after each. */
export const webSocketCloseCodes = Object.freeze({
  /** With reason `{"code":"stream-ended"}`: the stream ended, do not come back (any other 1001 is a server going away). */
  streamEnded: 1001,
  /** Reason `PUB_ERR_WS_CLIENT_MESSAGE`: the client sent a data message; do not come back. */
  clientMessage: 1008,
  /** A client frame over the server's `wsMaxPayloadBytes`; do not come back. */
  tooLarge: 1009,
  /** Shutdown, reason `{"retryMs":N}`: come back after N ms, resuming by the last id. */
  shutdown: 1012,
  /** Shed (overloaded, or `maxSubscribers` reached), reason `{"code":"PUB_ERR_OVERLOADED","retryMs":N}`: come back after N ms. */
  overloaded: 1013,
  /** Evicted as a slow reader, reason `{"code":"evicted","reason":"queue|stall|pong"}`: come back with backoff, resuming by the last id. */
  evicted: 4008,
} as const);

/** The `code` of a 1001 close reason that ends a stream for good. */
export const WS_STREAM_ENDED = 'stream-ended';

/** The reason of a 1008 close: the client sent a data message. */
export const WS_CLIENT_MESSAGE = 'PUB_ERR_WS_CLIENT_MESSAGE';

/** The `Prefer` header of a long-poll (RFC 7240 §4.3): hold the request up to `seconds` for the next element. */
export const preferWait = (seconds: number): string => `wait=${seconds}`;

// ── Durations (xsd:duration: a stream's dcat:temporalResolution, retention, notification rates) ──

const dayTimeDuration = /^P(?!$)(?:(\d{1,9})D)?(?:T(?!$)(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9}(?:\.\d{1,3})?)S)?)?$/;

/**
 * Parses an `xsd:duration` made of days, hours, minutes and seconds (`PT10S`, `P1DT2H`,
 * `PT0.5S`) into milliseconds; undefined for anything else. Years and months are refused: their
 * length depends on the calendar. The designators are read case-insensitively, since the Solid
 * notification examples write `PT10s`.
 */
export function parseDayTimeDuration(text: string): number | undefined {
  const match = dayTimeDuration.exec(text.toUpperCase());
  if (match === null) return undefined;
  const [, days, hours, minutes, seconds] = match;
  const ms =
    Number(days ?? 0) * 86_400_000 + Number(hours ?? 0) * 3_600_000 + Number(minutes ?? 0) * 60_000 + Math.round(Number(seconds ?? 0) * 1000);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** The `xsd:duration` of `ms` milliseconds, in seconds (`PT1.5S`). */
export const formatDuration = (ms: number) => `PT${ms / 1000}S`;

// ── CORS ────────────────────────────────────────────────────────────────────────────────────

/** The response headers a script in a browser may read (`Access-Control-Expose-Headers`), on every response. */
export const exposedHeaders: readonly string[] = Object.freeze([
  'ETag',
  'Link',
  'Expires',
  'Last-Modified',
  'Retry-After',
  STREAM_GAP_HEADER,
  'Date',
  'Location',
  'WWW-Authenticate',
  'Accept-Post',
]);

/**
 * An entity tag without its weakness indicator (`W/`): two tags match in the weak comparison
 * (RFC 9110 §8.8.3.2) when their opaque tags are the same — how If-None-Match is evaluated,
 * and how a cache selects the stored answer a 304 revalidates (RFC 9111 §4.3.4).
 */
export function opaqueTag(etag: string): string {
  const tag = etag.trim();
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
