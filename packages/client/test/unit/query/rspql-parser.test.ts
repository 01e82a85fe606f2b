import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRspQl, RspQlSyntaxError } from '../../../src/query/rspql-parser.js';

const example = readFileSync(new URL('../../../examples/average-free-spaces.rq', import.meta.url), 'utf8');

describe('parseRspQl', () => {
  it('parses the example: operator, name, window and a plain SPARQL query over GRAPH <w>', () => {
    const query = parseRspQl(example);
    expect(query.operator).toBe('RSTREAM');
    expect(query.name).toBe('<http://example.org/queries/average-free-spaces>');
    expect(query.windows).toEqual([
      {
        name: '<http://example.org/windows/last-30s>',
        stream: 'http://127.0.0.1:8080/streams/parking',
        spec: { kind: 'time', rangeMs: 30_000, stepMs: 10_000 },
      },
    ]);
    expect(query.sparql).toContain('GRAPH <http://example.org/windows/last-30s> {');
    expect(query.sparql).not.toMatch(/REGISTER|FROM NAMED WINDOW|WINDOW </);
  });

  it('supports several windows, prefixed names, tumbling defaults and count windows', () => {
    const query = parseRspQl(`PREFIX : <http://ex/>
REGISTER ISTREAM :q AS
SELECT * FROM NAMED WINDOW :a ON :s1 [RANGE PT1M] FROM NAMED WINDOW :b ON <http://ex/s2> [ELEMENTS 10 STEP 5]
WHERE { WINDOW :a { ?x ?p ?o } WINDOW :b { ?x ?q ?r } }`);
    expect(query.operator).toBe('ISTREAM');
    expect(query.windows.map((w) => [w.name, w.stream, w.spec])).toEqual([
      [':a', 'http://ex/s1', { kind: 'time', rangeMs: 60_000, stepMs: 60_000 }],
      [':b', 'http://ex/s2', { kind: 'count', size: 10, step: 5 }],
    ]);
    expect(query.sparql).toContain('GRAPH :a {');
    expect(query.sparql).toContain('GRAPH :b {');
  });

  it.each([
    ['SELECT * WHERE { ?s ?p ?o }', /expected REGISTER .* at line 1, column 1/],
    ['REGISTER STREAM <q> AS SELECT * WHERE {}', /expected REGISTER RSTREAM\|ISTREAM\|DSTREAM <name> AS at line 1, column 1/],
    ['REGISTER RSTREAM <q> AS SELECT * WHERE {}', /expected at least one FROM NAMED WINDOW/],
    ['REGISTER RSTREAM <q> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [RANGE 30s]\nWHERE {}', /RANGE needs a positive ISO 8601 duration .* at line 2, column 31/],
    ['REGISTER RSTREAM <q> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [SLIDE 3]\nWHERE {}', /expected RANGE .* at line 2, column 31/],
    ['REGISTER RSTREAM <q> AS SELECT *\nFROM NAMED WINDOW <w> [RANGE PT1S]\nWHERE {}', /expected FROM NAMED WINDOW <window> ON <stream> .* at line 2, column 1/],
    ['REGISTER RSTREAM <q> AS SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE PT1S]\nWHERE { WINDOW <v> { ?s ?p ?o } }', /window <v> is not declared .* at line 2, column 9/],
    ['REGISTER RSTREAM <q> AS SELECT * FROM NAMED WINDOW <w> ON ex:s [RANGE PT1S] WHERE {}', /prefix ex: is not declared/],
  ])('rejects %j with the position', (text, message) => {
    expect(() => parseRspQl(text)).toThrow(RspQlSyntaxError);
    expect(() => parseRspQl(text)).toThrow(message);
  });
});
