/** Where in a query its parser gave up, and why, in a few words. */
export interface SparqlSyntaxError {
  readonly message: string;
  /** 1-based; undefined when the parser's message names no place. */
  readonly line: number | undefined;
  /** 1-based, in UTF-16 code units as the query's text counts them. */
  readonly column: number | undefined;
}

/**
 * Reads the place of a syntax error out of the message of Comunica's SPARQL parser (traqula):
 * `Parse error on line N` followed by the line and a `----^` caret under the column; a lexer's
 * `unexpected character … at offset: N`; an `Unknown prefix: p` (at the first use of `p:`); a
 * parse error with no line at all is at the end of the input. Parser messages are not an API:
 * each pattern is tried, and what none matches has no place rather than a wrong one.
 */
export function sparqlSyntaxError(parserMessage: string, query: string): SparqlSyntaxError {
  const at = placeOf(parserMessage, query);
  return { message: summary(parserMessage), line: at?.line, column: at?.column };
}

function placeOf(message: string, query: string): { line: number; column: number | undefined } | undefined {
  const onLine = /on line (\d+)/.exec(message);
  if (onLine !== null) {
    const caret = /^(-*)\^$/m.exec(message);
    return { line: Number(onLine[1]), column: caret === null ? undefined : (caret[1] ?? '').length + 1 };
  }
  const offset = /at offset: (\d+)/.exec(message);
  if (offset !== null) return lineAndColumn(query, Number(offset[1]));
  const prefix = /Unknown prefix: ([^\s:]*)/.exec(message);
  if (prefix !== null) {
    const use = new RegExp(`(?<![\\w.:-])${escapeRegExp(prefix[1] ?? '')}:`).exec(withoutIrisStringsAndComments(query));
    return use === null ? undefined : lineAndColumn(query, use.index);
  }
  if (message.startsWith('Parse error')) return lineAndColumn(query, query.length);
  return undefined;
}

/** The 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.min(offset, text.length));
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: before.length - lineStart + 1 };
}

/** The parser's words without the echo of the line and the list of every token it expected. */
function summary(message: string): string {
  const found = /but found(?::| -->) '([^']*)'/.exec(message);
  if (found !== null) return found[1] === '' ? 'unexpected end of query' : `unexpected '${found[1]}'`;
  const character = /unexpected character: ->(.+?)<-/.exec(message);
  if (character !== null) return `unexpected character '${character[1]}'`;
  return message.split('\n')[0] ?? message;
}

/** `query` with its IRIs, strings and comments blanked out (same length): where a prefix is not used. */
function withoutIrisStringsAndComments(query: string): string {
  return query.replace(/<[^<>\s]*>|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*/g, (match) => ' '.repeat(match.length));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
