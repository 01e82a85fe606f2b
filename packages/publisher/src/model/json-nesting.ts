const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const STAR = 0x2a;
const LF = 0x0a;
const CR = 0x0d;
/** Each closing bracket, by its opening one: `[` → `]`, `{` → `}`. */
const CLOSER_OF: Readonly<Record<number, number>> = { 0x5b: 0x5d, 0x7b: 0x7d };

/**
 * The offset of the first `[` or `{` that opens nesting level `maxDepth + 1` in a JSON text, or
 * `undefined` if the text never goes deeper than `maxDepth`. One pass, no recursion, so any
 * text can be checked before a recursive reader (JSON.parse with a reviver, jsonld.js, the
 * error locator) sees it.
 *
 * For valid JSON this is the nesting of its arrays and objects. For any other text it is never
 * less than what a tolerant reader could recurse into: strings and comments are skipped as
 * jsonc-parser's scanner skips them (a string also ends at a raw line break; `//` and `/* *\/`
 * comments), and a closing bracket closes only the bracket it matches, as in that reader.
 */
export function jsonNestingBeyond(text: string, maxDepth: number): number | undefined {
  const expectedClosers: number[] = [];
  let offset = 0;
  while (offset < text.length) {
    const code = text.charCodeAt(offset);
    if (code === QUOTE) {
      offset = endOfString(text, offset + 1);
    } else if (code === SLASH && text.charCodeAt(offset + 1) === SLASH) {
      offset = endOfLine(text, offset + 2);
    } else if (code === SLASH && text.charCodeAt(offset + 1) === STAR) {
      const end = text.indexOf('*/', offset + 2);
      offset = end === -1 ? text.length : end + 2;
    } else {
      const closer = CLOSER_OF[code];
      if (closer !== undefined) {
        if (expectedClosers.length === maxDepth) return offset;
        expectedClosers.push(closer);
      } else if (code === expectedClosers.at(-1)) {
        expectedClosers.pop();
      }
      offset++;
    }
  }
  return undefined;
}

/** The offset after the string whose contents start at `offset`: after its quote, or at a line break. */
function endOfString(text: string, offset: number): number {
  while (offset < text.length) {
    const code = text.charCodeAt(offset);
    if (code === QUOTE) return offset + 1;
    if (code === LF || code === CR) return offset;
    offset += code === BACKSLASH ? 2 : 1;
  }
  return offset;
}

function endOfLine(text: string, offset: number): number {
  while (offset < text.length && text.charCodeAt(offset) !== LF && text.charCodeAt(offset) !== CR) offset++;
  return offset;
}
