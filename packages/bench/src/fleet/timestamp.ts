import { idSyntax, streamResourceSegments } from '@rdf-stream/protocol';

/**
 * The lean clients read only what the benchmark needs from the real payload (Turtle): the
 * element's `prov:generatedAtTime` and its sequence number from the graph IRI. The client
 * library decodes whole elements; a fleet of thousands in two processes cannot afford that.
 */
const GENERATED_AT = new RegExp(`<([^<>\\s]*/${streamResourceSegments.elements}/(?:${idSyntax.epoch}-)?(\\d+))> prov:generatedAtTime "([^"]+)"`);

/** The part of the pattern every stamp has, as bytes: where `elementStampIn` looks. */
const STAMP_PREDICATE = Buffer.from('> prov:generatedAtTime "', 'latin1');
const IRI_START = 0x3c; // <
const QUOTE = 0x22; // "

export function elementStamp(turtle: string): { seq: number; generatedAtMs: number } | undefined {
  const match = GENERATED_AT.exec(turtle);
  return match === null ? undefined : stampOf(match);
}

/** The stamp a match says; undefined when its time is no date. */
function stampOf(match: RegExpExecArray): { seq: number; generatedAtMs: number } | undefined {
  const generatedAtMs = Date.parse(match[3] as string);
  return Number.isNaN(generatedAtMs) ? undefined : { seq: Number(match[2]), generatedAtMs };
}

/**
 * `elementStamp` of a body as its UTF-8 bytes, without decoding it whole (a poller's answer is
 * kilobytes; thousands of pollers decoding each made much of a fleet's garbage): each
 * `> prov:generatedAtTime "` in turn, with the bytes from the `<` before it to the `"` after it,
 * decoded and matched. The first match decides, as in `elementStamp`, and it is the same one: an
 * IRI has no `<`, `>` or space, so a match starts at the last `<` before its predicate, and the
 * matches come in the order of their predicates.
 */
export function elementStampIn(bytes: Buffer): { seq: number; generatedAtMs: number } | undefined {
  for (let at = bytes.indexOf(STAMP_PREDICATE); at >= 0; at = bytes.indexOf(STAMP_PREDICATE, at + 1)) {
    const start = bytes.lastIndexOf(IRI_START, at);
    const end = bytes.indexOf(QUOTE, at + STAMP_PREDICATE.length + 1);
    if (start < 0 || end < 0) continue;
    const match = GENERATED_AT.exec(bytes.toString('utf8', start, end + 1));
    if (match !== null) return stampOf(match);
  }
  return undefined;
}
