import { idSyntax, streamResourceSegments } from '@rdf-stream/protocol';

/**
 * The lean clients read only what the benchmark needs from the real payload (Turtle): the
 * element's `prov:generatedAtTime` and its sequence number from the graph IRI. The client
 * library decodes whole elements; a fleet of thousands in two processes cannot afford that.
 */
const GENERATED_AT = new RegExp(`<([^<>\\s]*/${streamResourceSegments.elements}/(?:${idSyntax.epoch}-)?(\\d+))> prov:generatedAtTime "([^"]+)"`);

export function elementStamp(turtle: string): { seq: number; generatedAtMs: number } | undefined {
  const match = GENERATED_AT.exec(turtle);
  if (match === null) return undefined;
  const generatedAtMs = Date.parse(match[3] as string);
  return Number.isNaN(generatedAtMs) ? undefined : { seq: Number(match[2]), generatedAtMs };
}
