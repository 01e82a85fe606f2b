/**
 * The `Accept` header (RFC 9110 §12.5.1) read as the publisher needs it: each media range with
 * its weight and its charset; every other parameter (a JSON-LD `profile`, `level`, …) is kept
 * out of matching, since no representation we send differs by it.
 */

/** The charset of every textual representation the publisher sends (JSON has no other). */
export const SENT_CHARSET = 'utf-8';

export interface MediaRange {
  /** Lower case; `*` for any. */
  readonly type: string;
  /** Lower case; `*` for any. */
  readonly subtype: string;
  /** The `charset` parameter, lower case and unquoted, when the range names one. */
  readonly charset: string | undefined;
  /** The `q` weight, 0 to 1 (1 when absent). */
  readonly weight: number;
  /** Position in the header, from 0: the client's own order among equal weights. */
  readonly order: number;
}

const token = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/i;
// RFC 9110 §12.4.2: at most three decimals, never above 1.
const qvalue = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The media ranges of an `Accept` value, in header order. Commas and semicolons inside a quoted
 * parameter value (`profile="a;b, c"`) belong to the value. A member that is not a media range,
 * or whose weight is not a valid qvalue, is left out (the rest of the header still counts); a
 * parameter without `=` is left out of its range.
 */
export function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const member of splitOutsideQuotes(accept, ',')) {
    const [range = '', ...parameters] = splitOutsideQuotes(member, ';');
    const [type, subtype, ...extra] = range.trim().toLowerCase().split('/');
    if (type === undefined || subtype === undefined || extra.length > 0 || !token.test(type) || !token.test(subtype)) continue;
    if (type === '*' && subtype !== '*') continue;
    let weight = 1;
    let charset: string | undefined;
    let validWeight = true;
    for (const parameter of parameters) {
      const equals = parameter.indexOf('=');
      if (equals < 0) continue;
      const name = parameter.slice(0, equals).trim().toLowerCase();
      const value = unquote(parameter.slice(equals + 1).trim());
      if (name === 'q') {
        validWeight = qvalue.test(value);
        weight = Number(value);
      } else if (name === 'charset') {
        charset = value.toLowerCase();
      }
    }
    if (validWeight) ranges.push({ type, subtype, charset, weight, order: ranges.length });
  }
  return ranges;
}

interface Preference {
  readonly weight: number;
  readonly specificity: number;
  readonly order: number;
}

/**
 * The offered media type (`type/subtype`, sent in UTF-8) the ranges rate highest, or `undefined`
 * when they rate every one 0. Each offered type takes the weight of the most specific range
 * that matches it (RFC 9110 §12.5.1: `text/turtle` over `text/*` over `*\/*`, a range with a
 * charset over one without); the highest weight wins, then the more specific match, then the
 * client's order, then the order of `offered`. A range naming a charset other than UTF-8 matches
 * nothing we send.
 */
export function preferredMediaType(ranges: readonly MediaRange[], offered: readonly string[]): string | undefined {
  let best: { mediaType: string; preference: Preference } | undefined;
  for (const mediaType of offered) {
    const preference = preferenceFor(mediaType, ranges);
    if (preference === undefined || preference.weight === 0) continue;
    if (best === undefined || outranks(preference, best.preference)) best = { mediaType, preference };
  }
  return best?.mediaType;
}

function preferenceFor(mediaType: string, ranges: readonly MediaRange[]): Preference | undefined {
  const [type, subtype] = mediaType.toLowerCase().split('/');
  let best: Preference | undefined;
  for (const range of ranges) {
    if (range.charset !== undefined && range.charset !== SENT_CHARSET) continue;
    if (range.type !== '*' && range.type !== type) continue;
    if (range.subtype !== '*' && range.subtype !== subtype) continue;
    const specificity = (range.type === '*' ? 0 : 4) + (range.subtype === '*' ? 0 : 2) + (range.charset === undefined ? 0 : 1);
    // Among equally specific ranges (`application/ld+json;profile=…;q=0, application/ld+json`
    // differ only by a parameter we do not serve by), the client's best rating counts.
    if (best === undefined || specificity > best.specificity || (specificity === best.specificity && range.weight > best.weight)) {
      best = { weight: range.weight, specificity, order: range.order };
    }
  }
  return best;
}

function outranks(candidate: Preference, current: Preference): boolean {
  if (candidate.weight !== current.weight) return candidate.weight > current.weight;
  if (candidate.specificity !== current.specificity) return candidate.specificity > current.specificity;
  return candidate.order < current.order;
}

/** Splits on `separator` except inside a quoted string (where `\` escapes the next character). */
export function splitOutsideQuotes(value: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < value.length; index++) {
    const character = value[index];
    if (quoted && character === '\\') index++;
    else if (character === '"') quoted = !quoted;
    else if (!quoted && character === separator) {
      parts.push(value.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}
