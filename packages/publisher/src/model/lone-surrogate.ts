const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The UTF-16 code unit a `\uXXXX` escape at `offset` denotes, or NaN if there is none. */
function escapedUnit(text: string, offset: number): number {
  if (text.charCodeAt(offset) !== BACKSLASH || text.charCodeAt(offset + 1) !== LOWER_U) return Number.NaN;
  const hex = text.slice(offset + 2, offset + 6);
  return /^[0-9a-fA-F]{4}$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
}

/**
 * The offset of the first lone surrogate in a valid JSON text — half of a UTF-16 surrogate pair,
 * written as a `\uXXXX` escape or as the character itself — or `undefined` if every string is
 * well-formed Unicode. JSON.parse accepts lone surrogates, but they are no characters: RDF
 * serialisers written in UTF-8 turn them into U+FFFD, and Turtle refuses their escapes. One
 * pass, linear in the text.
 *
 * Trusts its caller to pass text JSON.parse accepted: every backslash then begins an escape.
 */
export function loneSurrogateInJson(text: string): number | undefined {
  let offset = 0;
  while (offset < text.length) {
    const code = text.charCodeAt(offset);
    if (code === BACKSLASH) {
      const unit = escapedUnit(text, offset);
      if (isHighSurrogate(unit) && isLowSurrogate(escapedUnit(text, offset + 6))) offset += 12;
      else if (isHighSurrogate(unit) || isLowSurrogate(unit)) return offset;
      else offset += Number.isNaN(unit) ? 2 : 6;
    } else if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(offset + 1))) {
      offset += 2;
    } else if (isHighSurrogate(code) || isLowSurrogate(code)) {
      return offset;
    } else {
      offset++;
    }
  }
  return undefined;
}
