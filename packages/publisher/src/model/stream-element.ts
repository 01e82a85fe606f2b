import type { Quad } from '@rdfjs/types';

/**
 * One update of a stream (RSP-QL / TripleWave style): a named graph of observations, its
 * timestamp and its sequence number. `quads` holds the graph's quads (in `graph`) and the
 * `<graph> prov:generatedAtTime` quad in the default graph.
 */
export interface StreamElement {
  readonly streamId: string;
  /** Unique and increasing per stream. */
  readonly seq: number;
  /** `{base}/streams/{id}/elements/{seq}` */
  readonly graph: string;
  readonly generatedAt: Date;
  readonly quads: readonly Quad[];
}

export const streamIri = (baseUrl: string, streamId: string) => `${baseUrl}/streams/${streamId}`;

export const elementGraphIri = (baseUrl: string, streamId: string, seq: number) =>
  `${streamIri(baseUrl, streamId)}/elements/${seq}`;
