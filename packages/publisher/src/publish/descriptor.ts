import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import {
  EVENT_STREAM_MEDIA_TYPE,
  type FormatName,
  formatDuration,
  formatNames,
  mediaTypeIri,
  mediaTypes,
  ontologyIris,
  ontologyPath,
  RDF_PATCH_MEDIA_TYPE,
  streamResources,
} from '@rdf-stream/protocol';
import { ns, prov, rdf, rdfStream, xsd } from '../model/vocabulary.js';
import type { StreamDefinition } from './stream-hub.js';
import { allSubscriptionServiceQuads, baseUrlOfStream } from './notifications/service-description.js';
import { sparqlServiceQuads } from './sparql/sparql-service-description.js';

const { namedNode, literal, quad, blankNode } = DataFactory;

const dcat = (local: string) => namedNode(`${ns.dcat}${local}`);
const dcterms = (local: string) => namedNode(`${ns.dcterms}${local}`);
const ldes = (local: string) => namedNode(`${ns.ldes}${local}`);
const a = namedNode(rdf.type);
const sseSpec = namedNode('https://html.spec.whatwg.org/multipage/server-sent-events.html');
const webSocketSpec = namedNode('https://www.rfc-editor.org/rfc/rfc6455');
const ldesSpec = namedNode('https://w3id.org/ldes/specification');
const rdfPatchSpec = namedNode('https://afs.github.io/rdf-delta/rdf-patch.html');

/** W3C format IRIs (http://www.w3.org/ns/formats/) for each format we serve. */
const formatIri: Readonly<Record<FormatName, string>> = {
  turtle: `${ns.formats}Turtle`,
  trig: `${ns.formats}TriG`,
  ntriples: `${ns.formats}N-Triples`,
  nquads: `${ns.formats}N-Quads`,
  jsonld: `${ns.formats}JSON-LD`,
};

const mediaType = (type: string) => namedNode(mediaTypeIri(type));

/**
 * The stream descriptor: an LDES `ldes:EventStream` (members timestamped by
 * `prov:generatedAtTime`, numbered by `rdfStream:sequenceNumber`) whose one `tree:view` is the
 * root of its history pages, a VoCaLS `vocals:RDFStream` with its endpoints, and a DCAT dataset
 * with one distribution per interface and format.
 */
export function descriptorQuads(stream: StreamDefinition): Quad[] {
  const subject = namedNode(stream.iri);
  const links = streamResources(stream.iri);
  const quads: Quad[] = [
    quad(subject, a, namedNode(`${ns.ldes}EventStream`)),
    quad(subject, a, namedNode(`${ns.vocals}RDFStream`)),
    quad(subject, a, dcat('Dataset')),
    quad(subject, dcterms('title'), literal(stream.title, 'en')),
    quad(subject, ldes('timestampPath'), namedNode(prov.generatedAtTime)),
    quad(subject, ldes('sequencePath'), namedNode(rdfStream.sequenceNumber)),
    // Exactly one view: LDES clients follow the first tree:view they find.
    quad(subject, namedNode(`${ns.tree}view`), namedNode(links.history)),
    // The view's time index, as its root links to it (no tree:relation: TREE clients would walk it).
    quad(namedNode(links.history), namedNode(rdfStream.timeIndex), namedNode(links.historyIndex)),
    quad(subject, dcterms('conformsTo'), namedNode(ontologyIris.profile)),
    ...memberShapeQuads(stream.iri),
  ];
  // Solid notifications: where to subscribe (EventSourceChannel2023, WebSocketChannel2023) to this stream or its /latest.
  quads.push(...allSubscriptionServiceQuads(stream.iri, baseUrlOfStream(stream.iri)));
  // Its SPARQL endpoint (void:sparqlEndpoint) and the sd:Service there.
  quads.push(...sparqlServiceQuads(stream.iri));
  if (stream.retainedSeconds > 0) {
    const policy = blankNode('retention');
    quads.push(
      quad(namedNode(links.history), ldes('retentionPolicy'), policy),
      quad(policy, ldes('fullLogDuration'), literal(`PT${stream.retainedSeconds}S`, namedNode(`${ns.xsd}duration`))),
    );
  }
  if (stream.description !== undefined) quads.push(quad(subject, dcterms('description'), literal(stream.description, 'en')));
  if (stream.license !== undefined) quads.push(quad(subject, dcterms('license'), namedNode(stream.license)));
  if (stream.expectedIntervalMs !== null) {
    quads.push(
      quad(
        subject,
        dcat('temporalResolution'),
        literal(formatDuration(stream.expectedIntervalMs), namedNode(`${ns.xsd}duration`)),
      ),
    );
  }
  const distributions: Quad[] = [];
  for (const format of formatNames) {
    const { links: formatLinks, descriptions } = formatDistributions(stream.iri, format);
    quads.push(...formatLinks);
    distributions.push(...descriptions);
  }
  const patches = patchDistributions(stream.iri);
  quads.push(...patches.links);
  distributions.push(...patches.descriptions);
  return [...quads, ...distributions];
}

/**
 * The shape of the stream's members (`tree:shape`), and where this publisher serves its
 * definition (`rdfs:isDefinedBy`): a client need not wait for the shape's w3id.org IRI to
 * redirect here, and an LDES client that finds the shape described does not fetch it.
 */
function memberShapeQuads(streamIri: string): Quad[] {
  const shape = namedNode(ontologyIris.elementShape);
  const definedBy = `${baseUrlOfStream(streamIri)}${ontologyPath(ontologyIris.shapes) as string}`;
  return [
    quad(namedNode(streamIri), namedNode(`${ns.tree}shape`), shape),
    quad(shape, namedNode(`${ns.rdfs}isDefinedBy`), namedNode(definedBy)),
  ];
}

/**
 * A format's four distributions (`/latest`, SSE, WebSocket, history): the stream's links to them,
 * and their descriptions, each subject's quads together so that Turtle groups them.
 */
function formatDistributions(streamIri: string, format: FormatName): { readonly links: Quad[]; readonly descriptions: Quad[] } {
  const subject = namedNode(streamIri);
  const links = streamResources(streamIri);
  const latest = namedNode(`${streamIri}#latest-${format}`);
  const events = namedNode(`${streamIri}#events-${format}`);
  const history = namedNode(`${streamIri}#history-${format}`);
  const webSocket = namedNode(`${streamIri}#ws-${format}`);
  return {
    links: [
      quad(subject, dcat('distribution'), latest),
      quad(subject, dcat('distribution'), events),
      quad(subject, dcat('distribution'), webSocket),
      quad(subject, dcat('distribution'), history),
      quad(subject, namedNode(`${ns.vocals}hasEndpoint`), events),
      quad(subject, namedNode(`${ns.vocals}hasEndpoint`), webSocket),
    ],
    descriptions: [
      quad(latest, a, dcat('Distribution')),
      quad(latest, dcterms('title'), literal(`Latest element (${format}), cacheable until the next one; long-poll with Prefer: wait`, 'en')),
      quad(latest, dcat('accessURL'), namedNode(links.latest)),
      quad(latest, dcat('mediaType'), mediaType(mediaTypes[format])),
      quad(latest, dcterms('format'), namedNode(formatIri[format])),
      quad(events, a, dcat('Distribution')),
      quad(events, a, namedNode(`${ns.vocals}StreamEndpoint`)),
      quad(events, dcterms('title'), literal(`Server-Sent Events, one event per element (${format})`, 'en')),
      quad(events, dcat('accessURL'), namedNode(`${links.events}?format=${format}`)),
      quad(events, dcat('mediaType'), mediaType(EVENT_STREAM_MEDIA_TYPE)),
      quad(events, dcterms('format'), namedNode(formatIri[format])),
      quad(events, dcterms('conformsTo'), sseSpec),
      quad(webSocket, a, dcat('Distribution')),
      quad(webSocket, a, namedNode(`${ns.vocals}StreamEndpoint`)),
      quad(webSocket, dcterms('title'), literal(`WebSocket, one text message per element (${format}); resume with ?lastEventId=`, 'en')),
      quad(webSocket, dcat('accessURL'), namedNode(`${links.webSocket}?format=${format}`)),
      quad(webSocket, dcat('mediaType'), mediaType(mediaTypes[format])),
      quad(webSocket, dcterms('format'), namedNode(formatIri[format])),
      quad(webSocket, dcterms('conformsTo'), webSocketSpec),
      quad(history, a, dcat('Distribution')),
      quad(history, dcterms('title'), literal(`History (${format}): LDES pages from the oldest retained element, full pages immutable`, 'en')),
      quad(history, dcat('accessURL'), namedNode(links.history)),
      quad(history, dcat('mediaType'), mediaType(mediaTypes[format])),
      quad(history, dcterms('format'), namedNode(formatIri[format])),
      quad(history, dcterms('conformsTo'), ldesSpec),
    ],
  };
}

/** The two RDF Patch distributions (`/patches` over SSE, the WebSocket's `?format=patch`): links and descriptions. */
function patchDistributions(streamIri: string): { readonly links: Quad[]; readonly descriptions: Quad[] } {
  const subject = namedNode(streamIri);
  const links = streamResources(streamIri);
  const patches = namedNode(`${streamIri}#patches`);
  const webSocketPatches = namedNode(`${streamIri}#ws-patch`);
  return {
    links: [quad(subject, dcat('distribution'), patches), quad(subject, dcat('distribution'), webSocketPatches)],
    descriptions: [
      quad(patches, a, dcat('Distribution')),
      quad(patches, dcterms('title'), literal('Server-Sent Events, one RDF Patch per element: what left and entered /latest (N-Triples)', 'en')),
      quad(patches, dcat('accessURL'), namedNode(links.patches)),
      quad(patches, dcat('mediaType'), mediaType(EVENT_STREAM_MEDIA_TYPE)),
      quad(patches, dcterms('format'), mediaType(RDF_PATCH_MEDIA_TYPE)),
      quad(patches, dcterms('conformsTo'), sseSpec),
      quad(patches, dcterms('conformsTo'), rdfPatchSpec),
      quad(webSocketPatches, a, dcat('Distribution')),
      quad(webSocketPatches, dcterms('title'), literal('WebSocket, one RDF Patch per element (the payload of /patches); resume with ?lastEventId=', 'en')),
      quad(webSocketPatches, dcat('accessURL'), namedNode(`${links.webSocket}?format=patch`)),
      quad(webSocketPatches, dcat('mediaType'), mediaType(RDF_PATCH_MEDIA_TYPE)),
      quad(webSocketPatches, dcterms('conformsTo'), webSocketSpec),
      quad(webSocketPatches, dcterms('conformsTo'), rdfPatchSpec),
    ],
  };
}

/** The catalogue of every stream this publisher serves (a `dcat:Catalog`). */
export function catalogueQuads(catalogueIri: string, streams: readonly StreamDefinition[]): Quad[] {
  const catalogue = namedNode(catalogueIri);
  const quads: Quad[] = [
    quad(catalogue, a, dcat('Catalog')),
    quad(catalogue, dcterms('title'), literal('Live RDF streams', 'en')),
    quad(catalogue, dcterms('modified'), literal(new Date().toISOString(), namedNode(xsd.dateTime))),
  ];
  for (const stream of streams) quads.push(quad(catalogue, dcat('dataset'), namedNode(stream.iri)));
  for (const stream of streams) {
    const subject = namedNode(stream.iri);
    quads.push(
      quad(subject, a, namedNode(`${ns.ldes}EventStream`)),
      quad(subject, a, dcat('Dataset')),
      quad(subject, dcterms('title'), literal(stream.title, 'en')),
    );
  }
  return quads;
}
