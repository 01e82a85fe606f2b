/**
 * The facts of the publisher's HTTP protocol (docs/protocol.md) that the publisher and its
 * clients must agree on, written once: formats and media types, the JSON-LD context and the
 * terms that date, number and describe an element, stream and element ids, where each resource
 * of a stream lives, the gap of a resumed stream, SSE event names, durations, headers.
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
 * Where a publisher serves the JSON-LD context its documents are compacted against
 * (`sosaStreamContext`). Clients map this path to `sosaStreamContext` and fetch nothing.
 */
export const CONTEXT_PATH = '/contexts/sosa-stream.jsonld';

/**
 * Where a publisher serves the client library for pages without a bundler: one self-contained
 * ES module of `@rdf-stream/client/live` (`@rdf-stream/client/browser`, the same file), which a
 * page's module script imports by its URL, `{base}/client/rdf-stream-live.js`.
 */
export const BROWSER_CLIENT_PATH = '/client/rdf-stream-live.js';

/**
 * The JSON-LD 1.1 context document of the publisher's JSON-LD (served at `CONTEXT_PATH`): the
 * SOSA, QUDT and PROV terms of an element, no `@vocab`, no remote imports. The one copy: the
 * publisher serves it, clients decode with it.
 */
export const sosaStreamContext: { readonly '@context': Readonly<Record<string, unknown>> } = deepFreeze({
  '@context': {
    '@version': 1.1,
    sosa: 'http://www.w3.org/ns/sosa/',
    ssn: 'http://www.w3.org/ns/ssn/',
    prov: 'http://www.w3.org/ns/prov#',
    xsd: 'http://www.w3.org/2001/XMLSchema#',
    datex: 'http://vocab.datex.org/terms#',
    qudt: 'http://qudt.org/schema/qudt/',
    unit: 'http://qudt.org/vocab/unit/',
    Observation: 'sosa:Observation',
    madeBySensor: {
      '@id': 'sosa:madeBySensor',
      '@type': '@id',
    },
    observedProperty: {
      '@id': 'sosa:observedProperty',
      '@type': '@id',
    },
    hasFeatureOfInterest: {
      '@id': 'sosa:hasFeatureOfInterest',
      '@type': '@id',
    },
    hasResult: {
      '@id': 'sosa:hasResult',
      '@type': '@id',
    },
    hasSimpleResult: {
      '@id': 'sosa:hasSimpleResult',
    },
    resultTime: {
      '@id': 'sosa:resultTime',
      '@type': 'xsd:dateTime',
    },
    phenomenonTime: {
      '@id': 'sosa:phenomenonTime',
      '@type': 'xsd:dateTime',
    },
    generatedAtTime: {
      '@id': 'prov:generatedAtTime',
      '@type': 'xsd:dateTime',
    },
    QuantityValue: 'qudt:QuantityValue',
    numericValue: {
      '@id': 'qudt:numericValue',
    },
    hasUnit: {
      '@id': 'qudt:hasUnit',
      '@type': '@id',
    },
  },
});

// ── Terms ───────────────────────────────────────────────────────────────────────────────────

/**
 * Where this project mints its own IRIs (its vocabulary, the SOSA profile, the profile's SHACL
 * shapes): a permanent w3id.org namespace that redirects to a publisher's `ONTOLOGIES_PATH`.
 */
export const RDF_STREAM_IRI_BASE = 'https://w3id.org/rdf-stream/';

/** The vocabulary of the terms below that are this project's own (`rdf-stream:`). */
const RDF_STREAM_VOCABULARY = `${RDF_STREAM_IRI_BASE}vocab#`;

/** The IRIs by which a client places an element of a publisher's documents in its stream. */
export const streamTerms = Object.freeze({
  /** `prov:generatedAtTime` of an element's graph: when it was generated, on the publisher's clock. */
  generatedAtTime: 'http://www.w3.org/ns/prov#generatedAtTime',
  /** `rdf-stream:sequenceNumber` (this project's vocabulary) of a history page's member, an `xsd:integer`. */
  sequenceNumber: `${RDF_STREAM_VOCABULARY}sequenceNumber`,
  /**
   * `rdf-stream:timeIndex` (this project's vocabulary): from the history's root node to its time
   * index (`history/index`), a `tree:Node` with a relation to every retained page. Not a
   * `tree:relation`, so that a TREE client walking the history from the root does not follow it.
   */
  timeIndex: `${RDF_STREAM_VOCABULARY}timeIndex`,
} as const);

/**
 * The IRIs by which the description of a sensor or feature of interest a stream mints
 * (`{stream}/sensors/{local}`, `{stream}/facilities/{local}`) leads back to its stream.
 */
export const resourceTerms = Object.freeze({
  /** `rdf-stream:stream`: the stream that mints the resource. */
  stream: `${RDF_STREAM_VOCABULARY}stream`,
  /** `rdf-stream:latestElement`: the newest element of that stream that mentions the resource. */
  latestElement: `${RDF_STREAM_VOCABULARY}latestElement`,
} as const);

/**
 * The documents of this project's IRIs (under `RDF_STREAM_IRI_BASE`). A publisher serves each
 * at `ONTOLOGIES_PATH` followed by the IRI's path below the base (`ontologyPath`), so that one
 * w3id.org redirect rule reaches them all.
 */
export const ontologyIris = Object.freeze({
  /** The `rdf-stream:` vocabulary (`rdf-stream:sequenceNumber`, …). */
  vocabulary: `${RDF_STREAM_IRI_BASE}vocab`,
  /** The SOSA profile: which SOSA terms elements use, and how (a stream descriptor's `dcterms:conformsTo`). */
  profile: `${RDF_STREAM_IRI_BASE}profile/sosa`,
  /** The SHACL shapes every element satisfies. */
  shapes: `${RDF_STREAM_IRI_BASE}profile/sosa/shapes`,
  /** The node shape of a stream's members (a stream descriptor's `tree:shape`). */
  elementShape: `${RDF_STREAM_IRI_BASE}profile/sosa/shapes#StreamElement`,
} as const);

/** Where a publisher serves the documents of the IRIs under `RDF_STREAM_IRI_BASE`. */
export const ONTOLOGIES_PATH = '/ontologies/';

/**
 * The path at which a publisher serves the document of `iri` (its fragment dropped):
 * `https://w3id.org/rdf-stream/vocab#sequenceNumber` → `/ontologies/vocab`. Undefined for an IRI
 * outside `RDF_STREAM_IRI_BASE`.
 */
export function ontologyPath(iri: string): string | undefined {
  if (!iri.startsWith(RDF_STREAM_IRI_BASE)) return undefined;
  const rest = iri.slice(RDF_STREAM_IRI_BASE.length).replace(/#.*$/, '');
  return rest === '' ? undefined : `${ONTOLOGIES_PATH}${rest}`;
}

/** The namespaces of the terms above and below. */
export const namespaces = Object.freeze({
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  sosa: 'http://www.w3.org/ns/sosa/',
  prov: 'http://www.w3.org/ns/prov#',
  qudt: 'http://qudt.org/schema/qudt/',
  dcterms: 'http://purl.org/dc/terms/',
  dcat: 'http://www.w3.org/ns/dcat#',
  ldes: 'https://w3id.org/ldes#',
  tree: 'https://w3id.org/tree#',
  rdfStream: RDF_STREAM_VOCABULARY,
} as const);

/** The DCAT terms of a publisher's catalogue (`GET /streams`) and stream descriptors that clients read. */
export const catalogueTerms = Object.freeze({
  /** The catalogue's `dcat:dataset`: each stream. */
  dataset: `${namespaces.dcat}dataset`,
  /** A stream's `dcat:distribution`: each interface and format. */
  distribution: `${namespaces.dcat}distribution`,
  accessURL: `${namespaces.dcat}accessURL`,
  /** A distribution's media type, as an IANA IRI (`mediaTypeIri`). */
  mediaType: `${namespaces.dcat}mediaType`,
  /** The stream's regular interval, an `xsd:duration` (`parseDayTimeDuration`); absent for an irregular stream. */
  temporalResolution: `${namespaces.dcat}temporalResolution`,
  title: `${namespaces.dcterms}title`,
} as const);

/** The SOSA and QUDT terms of an element's observations (the SOSA profile, ontologies/sosa-profile.ttl). */
export const observationTerms = Object.freeze({
  Observation: `${namespaces.sosa}Observation`,
  madeBySensor: `${namespaces.sosa}madeBySensor`,
  observedProperty: `${namespaces.sosa}observedProperty`,
  hasFeatureOfInterest: `${namespaces.sosa}hasFeatureOfInterest`,
  hasSimpleResult: `${namespaces.sosa}hasSimpleResult`,
  hasResult: `${namespaces.sosa}hasResult`,
  resultTime: `${namespaces.sosa}resultTime`,
  phenomenonTime: `${namespaces.sosa}phenomenonTime`,
  QuantityValue: `${namespaces.qudt}QuantityValue`,
  numericValue: `${namespaces.qudt}numericValue`,
  hasUnit: `${namespaces.qudt}hasUnit`,
  /** `qudt:unit`, the older name of `qudt:hasUnit`, that other publishers still write. */
  unit: `${namespaces.qudt}unit`,
  label: `${namespaces.rdfs}label`,
} as const);

/**
 * Solid Notifications (https://solidproject.org/TR/notifications-protocol): the vocabulary, the
 * JSON-LD contexts of subscriptions, channels and notifications, the channel types a publisher
 * offers, and where its services live (`{base}/notifications…`).
 */
export const solidNotifications = Object.freeze({
  /** The Solid Notifications vocabulary (`notify:`). */
  vocabulary: 'http://www.w3.org/ns/solid/notifications#',
  /** The context of subscription requests and channels. */
  context: 'https://www.w3.org/ns/solid/notification/v1',
  /** The contexts of a notification: Activity Streams, then Solid's. */
  notificationContexts: Object.freeze(['https://www.w3.org/ns/activitystreams', 'https://www.w3.org/ns/solid/notification/v1'] as const),
  /** `Link` relation to the description resource that lists the subscription services. */
  storageDescriptionRel: 'http://www.w3.org/ns/solid/terms#storageDescription',
  channelTypes: Object.freeze({ eventSource: 'EventSourceChannel2023', webSocket: 'WebSocketChannel2023' } as const),
  /** The description resource. */
  path: '/notifications',
  /** Each channel type's subscription service (`POST` to subscribe); a channel is the service's path followed by its id. */
  servicePaths: Object.freeze({ eventSource: '/notifications/eventsource', webSocket: '/notifications/websocket' } as const),
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

/**
 * An id a subscriber sends back (`Last-Event-ID`, `?lastEventId=`, a client's resume position):
 * an element id, or a bare number — the ids of publishers before ids carried their epoch, a
 * sequence number of no known life of the log (`epoch` undefined). Undefined for anything else.
 */
export function parseEventId(value: string): { readonly epoch: string | undefined; readonly seq: number } | undefined {
  const id = parseElementId(value);
  if (id !== undefined) return id;
  if (!/^\d{1,16}$/.test(value)) return undefined;
  const seq = Number(value);
  return Number.isSafeInteger(seq) ? { epoch: undefined, seq } : undefined;
}

// ── Resources: where a stream's documents live ──────────────────────────────────────────────

/** Where a publisher lists its streams (`GET /streams`); a stream's IRI is `{base}/streams/{id}`. */
export const STREAMS_PATH = '/streams';

/**
 * The resources of a stream, by the path segment after its IRI (`{base}/streams/{id}/{segment}`):
 * the newest element (also long-polled), Server-Sent Events of whole elements and of RDF Patch
 * deltas, the data WebSocket, the LDES history and its pages (`history/{epoch}-{n}`), each
 * element (`elements/{epoch}-{seq}`), and the sensors (`sensors/{local}`) and features of
 * interest (`facilities/{local}`) the stream mints. The stream's IRI itself names its descriptor.
 */
export const streamResourceSegments = Object.freeze({
  latest: 'latest',
  events: 'events',
  patches: 'patches',
  webSocket: 'ws',
  history: 'history',
  elements: 'elements',
  sensors: 'sensors',
  featuresOfInterest: 'facilities',
  sparql: 'sparql',
} as const);

export type StreamResource = keyof typeof streamResourceSegments;

/** The resources of a stream that are collections of members (`{segment}/{member}`). */
const collectionResources: ReadonlySet<StreamResource> = new Set(['history', 'elements', 'sensors', 'featuresOfInterest']);

const streamResourceOfSegment: ReadonlyMap<string, StreamResource> = new Map(
  Object.entries(streamResourceSegments).map(([resource, segment]) => [segment, resource as StreamResource]),
);

/**
 * The path of stream `id` on its publisher (`/streams/{id}`), or of one of its resources
 * (`/streams/{id}/latest`). With `:id` for the id it is a router's pattern.
 */
export const streamPath = (id: string, resource?: StreamResource): string =>
  resource === undefined ? `${STREAMS_PATH}/${id}` : `${STREAMS_PATH}/${id}/${streamResourceSegments[resource]}`;

/** The IRI of stream `id` of the publisher at `baseUrl` (no trailing slash): `{base}/streams/{id}`. */
export const streamIri = (baseUrl: string, id: string): string => `${baseUrl}${streamPath(id)}`;

/**
 * The segment after `history/` that names the time index. A page id is `{epoch}-{n}`: it never
 * reads `index`.
 */
export const HISTORY_INDEX_SEGMENT = 'index';

/** Every resource URL of one stream. */
export interface StreamResources {
  /** The stream's IRI, its descriptor (trailing slashes removed). */
  readonly stream: string;
  readonly latest: string;
  readonly events: string;
  readonly patches: string;
  /** The data WebSocket, as a `ws:` (or `wss:`) URL. */
  readonly webSocket: string;
  /** The LDES view: the root node of the history pages. */
  readonly history: string;
  /**
   * The history's time index, `history/index`: a `tree:Node` with a `tree:GreaterThanOrEqualToRelation`
   * on `prov:generatedAtTime` to every retained page, for a client to go to the page holding an instant.
   */
  readonly historyIndex: string;
  /** A history page, `history/{epoch}-{n}`. */
  historyPage(pageId: string): string;
  /** An element, `elements/{epoch}-{seq}`: the name of its graph. */
  element(elementId: string): string;
  /** A sensor the stream mints, `sensors/{local}` (`local` as it goes in the IRI: IRI-safe, not encoded here). */
  sensor(local: string): string;
  /** A feature of interest the stream mints, `facilities/{local}`. */
  featureOfInterest(local: string): string;
  /** The SPARQL 1.1 Protocol endpoint over a window of the stream's elements. */
  readonly sparql: string;
}

/** Every resource URL of the stream whose IRI (or URL, as a client was given it) is `streamIri`. */
export function streamResources(streamIri: string): StreamResources {
  const stream = streamIri.replace(/\/+$/, '');
  const at = (resource: StreamResource) => `${stream}/${streamResourceSegments[resource]}`;
  return Object.freeze({
    stream,
    latest: at('latest'),
    events: at('events'),
    patches: at('patches'),
    webSocket: at('webSocket').replace(/^http/, 'ws'),
    history: at('history'),
    historyIndex: `${at('history')}/${HISTORY_INDEX_SEGMENT}`,
    historyPage: (pageId: string) => `${at('history')}/${pageId}`,
    element: (id: string) => `${at('elements')}/${id}`,
    sensor: (local: string) => `${at('sensors')}/${local}`,
    featureOfInterest: (local: string) => `${at('featuresOfInterest')}/${local}`,
    sparql: at('sparql'),
  });
}

/**
 * The id at the end of an element's IRI (`…/elements/{epoch}-{seq}`, or a bare number from an
 * older publisher), if the IRI follows the publisher's convention.
 */
export function elementIdOfIri(iri: string): { readonly epoch: string | undefined; readonly seq: number } | undefined {
  const marker = `/${streamResourceSegments.elements}/`;
  const at = iri.lastIndexOf(marker);
  return at === -1 ? undefined : parseEventId(iri.slice(at + marker.length));
}

/** What a request path names: a stream, or one of its resources (and a member of a collection). */
export interface StreamPathMatch {
  readonly streamId: string;
  /** Undefined for the stream itself (`/streams/{id}`). */
  readonly resource: StreamResource | undefined;
  /** The segment after `history/`, `elements/`, `sensors/` or `facilities/`: a page, element or resource id, unchecked. */
  readonly member: string | undefined;
  /** What follows `?`, undefined when there is no `?`. */
  readonly query: string | undefined;
}

const resourceSegmentSyntax = Object.values(streamResourceSegments).join('|');
const STREAM_PATH = new RegExp(`^${STREAMS_PATH}/(${idSyntax.stream})(?:/(${resourceSegmentSyntax})(?:/([^/?#]+))?)?(?:\\?(.*))?$`);

/**
 * Reads a request path (with its query, if any) of a stream: `/streams/{id}`,
 * `/streams/{id}/{segment}` or `/streams/{id}/{collection}/{member}`.
 * Undefined for any other path (another resource, a trailing slash, an id that is no stream id).
 * A member is only read after `history`, `elements`, `sensors` and `facilities`.
 */
export function matchStreamPath(path: string): StreamPathMatch | undefined {
  const match = STREAM_PATH.exec(path);
  if (match === null) return undefined;
  const [, streamId, segment, member, query] = match;
  const resource = segment === undefined ? undefined : streamResourceOfSegment.get(segment);
  if (member !== undefined && (resource === undefined || !collectionResources.has(resource))) return undefined;
  return { streamId: streamId as string, resource, member, query };
}

/**
 * The request paths of any stream's `resources` (with a query, if any), for a hot path that
 * matches one pattern and builds nothing: group 1 is the stream id, group 2 the query (undefined
 * without a `?`).
 */
export function streamPathPattern(...resources: readonly StreamResource[]): RegExp {
  const segments = resources.map((resource) => streamResourceSegments[resource]).join('|');
  return new RegExp(`^${STREAMS_PATH}/(${idSyntax.stream})/(?:${segments})(?:\\?(.*))?$`);
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

/** Freezes `value` and every object in it. */
function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  return Object.freeze(value);
}
