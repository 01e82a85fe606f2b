import { describe, expect, it } from 'vitest';
import { lineAndColumn, sparqlSyntaxError } from '../../../../src/publish/sparql/sparql-syntax-error.js';

describe('sparqlSyntaxError', () => {
  it("reads the line and the caret's column of a parse error", () => {
    const message = "Parse error on line 3\n  FILTER(?x > ) }\n-------------^\nExpecting: one of these possible Token sequences:\n  1. [(]\nbut found: ')'";
    expect(sparqlSyntaxError(message, '')).toEqual({ message: "unexpected ')'", line: 3, column: 14 });
  });

  it('keeps the line when the message has no caret', () => {
    expect(sparqlSyntaxError('Parse error on line 2\nbut found: \'}\'', '')).toMatchObject({ line: 2, column: undefined });
  });

  it("places a lexer's offset in the query", () => {
    const query = 'SELECT *\nWHERE { ?s ?p ?o ~ }';
    const message = 'unexpected character: ->~<- at offset: 26, skipped 1 characters.';
    expect(sparqlSyntaxError(message, query)).toEqual({ message: "unexpected character '~'", line: 2, column: 18 });
  });

  it('places an unknown prefix at its first use, not inside an IRI', () => {
    const query = 'SELECT * WHERE {\n  <http://x/ex:y> ?p ?o .\n  ?s ex:p ?o }';
    expect(sparqlSyntaxError('Unknown prefix: ex', query)).toEqual({ message: 'Unknown prefix: ex', line: 3, column: 6 });
  });

  it('places a parse error without a line at the end of the query', () => {
    const query = 'SELECT * WHERE {\n  ?s ?p ?o';
    expect(sparqlSyntaxError("Parse error\nExpecting --> } <-- but found --> '' <--", query)).toEqual({ message: 'unexpected end of query', line: 2, column: 11 });
  });

  it('gives no place rather than a wrong one for a message it does not know', () => {
    expect(sparqlSyntaxError('Something else', 'ASK {}')).toEqual({ message: 'Something else', line: undefined, column: undefined });
  });
});

describe('lineAndColumn', () => {
  it('counts lines and columns from 1', () => {
    expect(lineAndColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn('ab', 10)).toEqual({ line: 1, column: 3 });
  });
});
