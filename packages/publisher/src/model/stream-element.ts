import type { Quad } from '@rdfjs/types';
import { elementId, streamIri, streamResourceSegments } from '@rdf-stream/protocol';

/**
 * One update of a stream (RSP-QL / TripleWave style): a named graph of observations, its
 * timestamp and its sequence number. `quads` holds the graph's quads (in `graph`) and the
 * `<graph> prov:generatedAtTime` quad in the default graph.
 */
export interface StreamElement {
  readonly streamId: string;
  /** The life of the stream's log this element belongs to (see `EventLog.epoch`). */
  readonly epoch: string;
  /** Unique and increasing per stream. */
  readonly seq: number;
  /** `{base}/streams/{id}/elements/{epoch}-{seq}` (the element id of `@rdf-stream/protocol`) */
  readonly graph: string;
  readonly generatedAt: Date;
  readonly quads: readonly Quad[];
}

export const elementGraphIri = (baseUrl: string, streamId: string, epoch: string, seq: number) =>
  `${streamIri(baseUrl, streamId)}/${streamResourceSegments.elements}/${elementId(epoch, seq)}`;
