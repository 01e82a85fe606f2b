import type { Quad } from '@rdfjs/types';
import { DataFactory, Writer } from 'n3';
import { type FormatName, formatNames } from '@rdf-stream/protocol';
import type { RenderedElement, StreamElement } from '../model/stream-element.js';
import { turtlePrefixes } from '../model/vocabulary.js';
import { formats } from './output-formats.js';
import type { JsonLdWriter } from './jsonld-writer.js';

export type { IdempotencyStamp, LoggedElement, RenderedElement } from '../model/stream-element.js';

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
 * Renders an element in every format, once: the documents the log keeps, from which every
 * representation is made. Formats without graphs (Turtle, N-Triples) carry the graph's triples
 * in the default graph next to the `prov:generatedAtTime` triple.
 */
export function renderElement(element: StreamElement, jsonLd: JsonLdWriter): RenderedElement {
  const documents = {} as Record<FormatName, Buffer>;
  for (const format of formatNames) {
    documents[format] = Buffer.from(format === 'jsonld' ? jsonLd.write(element.quads) : writeRdf(element.quads, format));
  }
  return {
    streamId: element.streamId,
    epoch: element.epoch,
    seq: element.seq,
    graph: element.graph,
    generatedAt: element.generatedAt,
    documents: Object.freeze(documents),
  };
}
