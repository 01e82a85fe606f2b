import type { Quad } from '@rdfjs/types';

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
  /** `{base}/streams/{id}/elements/{epoch}-{seq}` */
  readonly graph: string;
  readonly generatedAt: Date;
  readonly quads: readonly Quad[];
}

export const streamIri = (baseUrl: string, streamId: string) => `${baseUrl}/streams/${streamId}`;

/**
 * An element's id: its log's epoch and its sequence number, `{epoch}-{seq}`. It is the SSE
 * `id:`, the last segment of the element's IRI and what `Last-Event-ID` sends back; the epoch
 * keeps ids of two lives of a log (a lost or replaced data directory) apart.
 */
export const elementId = (epoch: string, seq: number) => `${epoch}-${seq}`;

/** Parses an element id; undefined when `value` is not one. */
export function parseElementId(value: string): { readonly epoch: string; readonly seq: number } | undefined {
  const match = /^([a-z0-9]{1,32})-([1-9]\d{0,15})$/.exec(value);
  if (match === null) return undefined;
  const seq = Number(match[2]);
  return Number.isSafeInteger(seq) ? { epoch: match[1] as string, seq } : undefined;
}

export const elementGraphIri = (baseUrl: string, streamId: string, epoch: string, seq: number) =>
  `${streamIri(baseUrl, streamId)}/elements/${elementId(epoch, seq)}`;
