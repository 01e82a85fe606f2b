import type { Quad } from '@rdfjs/types';
import { Parser } from 'n3';
import { catalogueTerms as terms, MEDIA_TYPE_IRI_BASE, mediaTypes, STREAMS_PATH } from '@rdf-stream/protocol';

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
  const catalogue = `${origin}${STREAMS_PATH}`;
  const quads = await readTurtle(catalogue, signal);
  return quads
    .filter((quad) => quad.subject.value === catalogue && quad.predicate.value === terms.dataset)
    .map((quad) => quad.object.value)
    .map((iri) => ({ iri, id: iri.slice(iri.lastIndexOf('/') + 1), title: objectOf(quads, iri, terms.title) ?? iri }));
}

/** A stream's descriptor: its title, its interval and every interface it offers (`dcat:distribution`). */
export async function readDescriptor(streamIri: string, signal?: AbortSignal): Promise<StreamDescriptor> {
  const quads = await readTurtle(streamIri, signal);
  const interfaces = quads
    .filter((quad) => quad.subject.value === streamIri && quad.predicate.value === terms.distribution)
    .map((quad) => quad.object.value)
    .map((distribution) => ({
      title: objectOf(quads, distribution, terms.title) ?? distribution,
      url: objectOf(quads, distribution, terms.accessURL) ?? distribution,
      mediaType: (objectOf(quads, distribution, terms.mediaType) ?? '').replace(MEDIA_TYPE_IRI_BASE, ''),
    }));
  return {
    title: objectOf(quads, streamIri, terms.title) ?? streamIri,
    interval: objectOf(quads, streamIri, terms.temporalResolution),
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
