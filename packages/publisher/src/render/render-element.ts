import type { Quad } from '@rdfjs/types';
import { DataFactory, Writer } from 'n3';
import { elementId, type FormatName, formatNames } from '@rdf-stream/protocol';
import { type StreamElement } from '../model/stream-element.js';
import { turtlePrefixes } from '../model/vocabulary.js';
import { formats } from './output-formats.js';
import type { JsonLdWriter } from './jsonld-writer.js';
import { sseFrame, trimFinalNewline } from './sse-frame.js';

/** An element rendered once per format: the bytes every request and subscriber reuses. */
export interface RenderedElement {
  readonly streamId: string;
  readonly seq: number;
  readonly graph: string;
  readonly generatedAt: Date;
  /** Document bodies (for `/latest`). */
  readonly bodies: Readonly<Record<FormatName, Buffer>>;
  /** Complete SSE messages (`id:` + `data:` lines), ready to be written to any subscriber. */
  readonly frames: Readonly<Record<FormatName, Buffer>>;
}

/** Serialises quads in one of the n3-supported formats (everything but JSON-LD). */
export function writeRdf(
  quads: readonly Quad[],
  format: Exclude<FormatName, 'jsonld'>,
  prefixes: Readonly<Record<string, string>> = turtlePrefixes,
): string {
  const { n3Format } = formats[format];
  const graphs = format === 'trig' || format === 'nquads';
  const writer = new Writer({ format: n3Format, prefixes: format === 'turtle' || format === 'trig' ? { ...prefixes } : {} });
  writer.addQuads(
    graphs ? [...quads] : quads.map((q) => DataFactory.quad(q.subject, q.predicate, q.object, DataFactory.defaultGraph())),
  );
  let output: string | undefined;
  writer.end((error, result) => {
    if (error) throw error;
    output = result;
  });
  if (output === undefined) throw new Error('n3 Writer did not complete synchronously');
  return output;
}

/**
 * Renders an element in every format, once. Formats without graphs (Turtle, N-Triples) carry
 * the graph's triples in the default graph next to the `prov:generatedAtTime` triple.
 */
export function renderElement(element: StreamElement, jsonLd: JsonLdWriter): RenderedElement {
  return render(element, jsonLd, true);
}

/**
 * Renders an element's SSE frames only: what the log keeps, and every document is rebuilt from
 * them (`frameDocument`), so the writer need not build the bodies too.
 */
export function renderFrames(element: StreamElement, jsonLd: JsonLdWriter): LoggedElement {
  const { bodies: _bodies, ...logged } = render(element, jsonLd, false);
  return logged;
}

function render(element: StreamElement, jsonLd: JsonLdWriter, withBodies: boolean): RenderedElement {
  const bodies = {} as Record<FormatName, Buffer>;
  const frames = {} as Record<FormatName, Buffer>;
  for (const format of formatNames) {
    const text = format === 'jsonld' ? jsonLd.write(element.quads) : writeRdf(element.quads, format);
    if (withBodies) bodies[format] = Buffer.from(text);
    frames[format] = Buffer.from(sseFrame({ id: elementId(element.epoch, element.seq), data: trimFinalNewline(text) }));
  }
  return {
    streamId: element.streamId,
    seq: element.seq,
    graph: element.graph,
    generatedAt: element.generatedAt,
    bodies: Object.freeze(bodies),
    frames: Object.freeze(frames),
  };
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
 * What the log keeps of an element: its SSE frames, for replay (the bodies only serve
 * `/latest`), and the idempotency key of the ingest request that created it, if it sent one.
 */
export type LoggedElement = Omit<RenderedElement, 'bodies'> & { readonly idempotency?: IdempotencyStamp | undefined };
