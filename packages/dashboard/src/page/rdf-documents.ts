import type { Quad } from '@rdfjs/types';
import { Parser } from 'n3';
import { MEDIA_TYPE_IRI_BASE, mediaTypes } from '@rdf-stream/protocol';

const dcterms = 'http://purl.org/dc/terms/';
const dcat = 'http://www.w3.org/ns/dcat#';

export interface StreamSummary {
  readonly iri: string;
  readonly id: string;
  readonly title: string;
}

export interface StreamInterface {
  readonly title: string;
  readonly url: string;
  readonly mediaType: string;
}

export interface StreamDescriptor {
  readonly title: string;
  /** `dcat:temporalResolution` (an xsd:duration such as `PT5S`), if the stream has a regular interval. */
  readonly interval: string | undefined;
  readonly interfaces: readonly StreamInterface[];
}

/** Reads an RDF document of the publisher as Turtle. */
async function readTurtle(url: string, signal?: AbortSignal): Promise<Quad[]> {
  const response = await fetch(url, { headers: { accept: mediaTypes.turtle }, signal: signal ?? null });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return new Parser({ baseIRI: url }).parse(await response.text());
}

const objectOf = (quads: readonly Quad[], subject: string, predicate: string) =>
  quads.find((quad) => quad.subject.value === subject && quad.predicate.value === predicate)?.object.value;

/** The streams `GET /streams` lists. */
export async function readCatalogue(origin: string, signal?: AbortSignal): Promise<StreamSummary[]> {
  const catalogue = `${origin}/streams`;
  const quads = await readTurtle(catalogue, signal);
  return quads
    .filter((quad) => quad.subject.value === catalogue && quad.predicate.value === `${dcat}dataset`)
    .map((quad) => quad.object.value)
    .map((iri) => ({ iri, id: iri.slice(iri.lastIndexOf('/') + 1), title: objectOf(quads, iri, `${dcterms}title`) ?? iri }));
}

/** A stream's descriptor: its title, its interval and every interface it offers (`dcat:distribution`). */
export async function readDescriptor(streamIri: string, signal?: AbortSignal): Promise<StreamDescriptor> {
  const quads = await readTurtle(streamIri, signal);
  const interfaces = quads
    .filter((quad) => quad.subject.value === streamIri && quad.predicate.value === `${dcat}distribution`)
    .map((quad) => quad.object.value)
    .map((distribution) => ({
      title: objectOf(quads, distribution, `${dcterms}title`) ?? distribution,
      url: objectOf(quads, distribution, `${dcat}accessURL`) ?? distribution,
      mediaType: (objectOf(quads, distribution, `${dcat}mediaType`) ?? '').replace(MEDIA_TYPE_IRI_BASE, ''),
    }));
  return {
    title: objectOf(quads, streamIri, `${dcterms}title`) ?? streamIri,
    interval: objectOf(quads, streamIri, `${dcat}temporalResolution`),
    interfaces,
  };
}

/** `GET /health`: per stream, its source's kind and state and its latest sequence number. */
export interface StreamHealth {
  readonly latestSeq: number;
  readonly lastElementAt: string | null;
  readonly source: { readonly kind: string; readonly state: string; readonly detail?: string };
}

export async function readHealth(origin: string, signal?: AbortSignal): Promise<Record<string, StreamHealth>> {
  const response = await fetch(`${origin}/health`, { headers: { accept: 'application/json' }, signal: signal ?? null });
  const body = (await response.json()) as { streams?: Record<string, StreamHealth> };
  return body.streams ?? {};
}
