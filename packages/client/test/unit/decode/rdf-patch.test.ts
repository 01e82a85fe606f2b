import { DataFactory, Store } from 'n3';
import { describe, expect, it } from 'vitest';
import { applyRdfPatch, parseRdfPatch, RdfPatchSyntaxError } from '../../../src/decode/rdf-patch.js';

const { namedNode, literal, quad } = DataFactory;

describe('parseRdfPatch', () => {
  it('reads headers, transactions and A / D rows (terms as in N-Triples)', () => {
    const patch = parseRdfPatch(
      [
        'H id <http://e/2> .',
        'H prev <http://e/1> .',
        'TX .',
        'D <http://s> <http://p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        'A <http://s> <http://p> "2"^^<http://www.w3.org/2001/XMLSchema#integer> .',
        'A <http://s> <http://q> "a \\"b\\""@en .',
        'TC .',
      ].join('\n'),
    );
    expect(patch.id).toBe('http://e/2');
    expect(patch.prev).toBe('http://e/1');
    expect(patch.deleted).toHaveLength(1);
    expect(patch.added.map((q) => q.object.value)).toEqual(['2', 'a "b"']);
  });

  it('drops the rows of an aborted transaction (TA), applies rows outside a transaction, skips prefix rows', () => {
    const patch = parseRdfPatch(['H id <http://e/3> .', 'A <http://s> <http://p> <http://o1> .', 'TX .', 'PA "ex" "http://e/" .', 'A <http://s> <http://p> <http://o2> .', 'TA .'].join('\n'));
    expect(patch.prev).toBeUndefined();
    expect(patch.added.map((q) => q.object.value)).toEqual(['http://o1']);
  });

  it('refuses what it cannot read', () => {
    expect(() => parseRdfPatch('X <http://s> <http://p> <http://o> .')).toThrow(RdfPatchSyntaxError);
    expect(() => parseRdfPatch('TX .\nA <http://s> <http://p> <http://o> .')).toThrow(/inside a transaction/);
    expect(() => parseRdfPatch('A <http://s> <http://p> .')).toThrow(RdfPatchSyntaxError);
    expect(() => parseRdfPatch('H id nope')).toThrow(/header/);
  });

  it('applies deletions, then additions, to a store', () => {
    const store = new Store([quad(namedNode('http://s'), namedNode('http://p'), literal('1'))]);
    applyRdfPatch(store, parseRdfPatch('TX .\nD <http://s> <http://p> "1" .\nA <http://s> <http://p> "2" .\nTC .'));
    expect([...store].map((q) => q.object.value)).toEqual(['2']);
  });
});
