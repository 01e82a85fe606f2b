import type { WindowSpec } from '../window/window-spec.js';

export type StreamOperator = 'RSTREAM' | 'ISTREAM' | 'DSTREAM';

/** A window declared by `FROM NAMED WINDOW <w> ON <stream> [ … ]`. */
export interface WindowDeclaration {
  /** The window's IRI, as written (prefixed names are kept and resolved by SPARQL). */
  readonly name: string;
  readonly stream: string;
  readonly spec: WindowSpec;
}

/** An RSP-QL query, split into its continuous part and a plain SPARQL query over the windows. */
export interface RegisteredQuery {
  readonly operator: StreamOperator;
  readonly name: string;
  readonly windows: readonly WindowDeclaration[];
  /** The query with `WINDOW <w> { … }` turned into `GRAPH <w> { … }`, evaluated on each window content. */
  readonly sparql: string;
}

/** A query outside the supported RSP-QL subset; the message names the line and column. */
export class RspQlSyntaxError extends Error {
  override readonly name = 'RspQlSyntaxError';

  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${message} at line ${line}, column ${column}`);
  }
}

const IRI = String.raw`(<[^<>"{}|^\x60\\\s]*>|[A-Za-z][\w.-]*:[\w.-]*|:[\w.-]*)`;
const DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

/** Milliseconds of an ISO 8601 duration such as `PT30S`, `PT1M30S`, `PT0.5S` or `P1D`. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (match === null || text.toUpperCase() === 'P' || text.toUpperCase() === 'PT') return undefined;
  const [, days = '0', hours = '0', minutes = '0', seconds = '0'] = match;
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000;
}

/**
 * Parses the supported RSP-QL subset:
 *
 * ```
 * PREFIX …
 * REGISTER RSTREAM|ISTREAM|DSTREAM <name> AS
 * SELECT|ASK|CONSTRUCT …
 * FROM NAMED WINDOW <w> ON <stream> [RANGE PT30S STEP PT10S]   (time; STEP defaults to RANGE)
 * FROM NAMED WINDOW <v> ON <stream> [ELEMENTS 10 STEP 5]       (count; our extension)
 * WHERE { WINDOW <w> { … } … }
 * ```
 *
 * Throws `RspQlSyntaxError` naming the position of the first problem.
 */
export function parseRspQl(text: string): RegisteredQuery {
  const at = (index: number, message: string): never => {
    const before = text.slice(0, index);
    const line = before.split('\n').length;
    throw new RspQlSyntaxError(message, line, index - before.lastIndexOf('\n'));
  };

  const register = new RegExp(String.raw`\bREGISTER\b`, 'i').exec(text);
  if (register === null) at(0, 'expected REGISTER RSTREAM|ISTREAM|DSTREAM <name> AS');
  const header = new RegExp(String.raw`REGISTER\s+(RSTREAM|ISTREAM|DSTREAM)\s+${IRI}\s+AS\b`, 'iy');
  header.lastIndex = register!.index;
  const headerMatch = header.exec(text);
  if (headerMatch === null) at(register!.index, 'expected REGISTER RSTREAM|ISTREAM|DSTREAM <name> AS');
  const [headerText, operator, name] = headerMatch as unknown as [string, string, string];

  const windows: WindowDeclaration[] = [];
  const removals: Array<[number, number]> = [[register!.index, register!.index + headerText.length]];
  const declaration = new RegExp(String.raw`\bFROM\s+NAMED\s+WINDOW\b`, 'gi');
  for (const found of text.matchAll(declaration)) {
    const full = new RegExp(String.raw`FROM\s+NAMED\s+WINDOW\s+${IRI}\s+ON\s+${IRI}\s*\[([^\]]*)\]`, 'iy');
    full.lastIndex = found.index;
    const match = full.exec(text);
    if (match === null) at(found.index, 'expected FROM NAMED WINDOW <window> ON <stream> [RANGE … STEP …]');
    const [clause, windowName, stream, body] = match as unknown as [string, string, string, string];
    const bodyIndex = found.index + clause.indexOf('[') + 1;
    windows.push({ name: windowName, stream: expandIri(text, stream, found.index, at), spec: windowSpec(body, bodyIndex, at) });
    removals.push([found.index, found.index + clause.length]);
  }
  if (windows.length === 0) at(headerMatch!.index + headerText.length, 'expected at least one FROM NAMED WINDOW');
  const names = new Set<string>();
  for (const window of windows) {
    if (names.has(window.name)) at(text.indexOf(window.name), `window ${window.name} is declared twice`);
    names.add(window.name);
  }

  let sparql = '';
  let cursor = 0;
  for (const [start, end] of removals.sort((a, b) => a[0] - b[0])) {
    sparql += `${text.slice(cursor, start)}${' '.repeat(end - start)}`;
    cursor = end;
  }
  sparql += text.slice(cursor);
  sparql = sparql.replace(new RegExp(String.raw`\bWINDOW\s+${IRI}\s*\{`, 'gi'), (_match, windowName: string, offset: number) => {
    if (!names.has(windowName)) at(offset, `window ${windowName} is not declared with FROM NAMED WINDOW`);
    return `GRAPH ${windowName} {`;
  });
  return { operator: operator.toUpperCase() as StreamOperator, name, windows, sparql };
}

function windowSpec(body: string, index: number, at: (index: number, message: string) => never): WindowSpec {
  const time = /^\s*RANGE\s+(\S+)(?:\s+STEP\s+(\S+))?\s*$/i.exec(body);
  if (time) {
    const rangeMs = durationMs(time[1]!);
    const stepMs = time[2] === undefined ? rangeMs : durationMs(time[2]);
    if (rangeMs === undefined || rangeMs <= 0) at(index, `RANGE needs a positive ISO 8601 duration such as PT30S, got ${time[1]}`);
    if (stepMs === undefined || stepMs <= 0) at(index, `STEP needs a positive ISO 8601 duration such as PT10S, got ${time[2]}`);
    return { kind: 'time', rangeMs: rangeMs!, stepMs: stepMs! };
  }
  const count = /^\s*ELEMENTS\s+(\d+)(?:\s+STEP\s+(\d+))?\s*$/i.exec(body);
  if (count) {
    const size = Number(count[1]);
    const step = count[2] === undefined ? size : Number(count[2]);
    if (size < 1 || step < 1) at(index, 'ELEMENTS and STEP must be positive');
    return { kind: 'count', size, step };
  }
  return at(index, 'expected RANGE <duration> [STEP <duration>] or ELEMENTS <n> [STEP <n>]');
}

/** The absolute IRI of `<iri>` or a prefixed name declared with PREFIX. */
function expandIri(text: string, token: string, index: number, at: (index: number, message: string) => never): string {
  if (token.startsWith('<')) return token.slice(1, -1);
  const colon = token.indexOf(':');
  const prefix = token.slice(0, colon);
  const declared = new RegExp(String.raw`PREFIX\s+${prefix.replace(/[.-]/g, '\\$&')}:\s*<([^>]*)>`, 'i').exec(text);
  if (declared === null) return at(index, `prefix ${prefix}: is not declared`);
  return declared[1] + token.slice(colon + 1);
}
