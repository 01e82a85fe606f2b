import type { Quad } from '@rdfjs/types';
import { elementId, type FormatName, streamIri, streamResourceSegments } from '@rdf-stream/protocol';

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

/**
 * An element rendered once per format: the documents every interface serves and every
 * representation is made from (SSE frames, WebSocket messages, `/latest`, history pages).
 */
export interface RenderedElement {
  readonly streamId: string;
  /** The life of the log the element belongs to: its id is `{epoch}-{seq}`. */
  readonly epoch: string;
  readonly seq: number;
  readonly graph: string;
  readonly generatedAt: Date;
  /** The element's document in each format, as `/elements/{id}` serves it. */
  readonly documents: Readonly<Record<FormatName, Buffer>>;
}

/**
 * An ingest request's `Idempotency-Key` and the fingerprint of what it sent (format and body),
 * kept with the element it created, so that a retry finds its element after a restart.
 */
export interface IdempotencyStamp {
  /** 1–255 visible ASCII characters. */
  readonly key: string;
  /** At most 255 ASCII characters (a base64url SHA-256). */
  readonly fingerprint: string;
}

/**
 * What the log keeps of an element: its documents, and the idempotency key of the ingest request
 * that created it, if it sent one. Every wire form (an SSE frame, a gzip fragment, a WebSocket
 * frame) is a projection of the documents, made on first use and kept with the element object.
 */
export interface LoggedElement extends RenderedElement {
  readonly idempotency?: IdempotencyStamp | undefined;
}

export const elementGraphIri = (baseUrl: string, streamId: string, epoch: string, seq: number) =>
  `${streamIri(baseUrl, streamId)}/${streamResourceSegments.elements}/${elementId(epoch, seq)}`;
