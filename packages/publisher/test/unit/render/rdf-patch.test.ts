import { DataFactory } from 'n3';
import { describe, expect, it } from 'vitest';
import { diffTriples, tripleLine, tripleSetOf, writeRdfPatch } from '../../../src/render/rdf-patch.js';

const { namedNode, literal, quad, blankNode } = DataFactory;

describe('RDF Patch', () => {
  it('writes headers, one transaction, deletions then additions, each row ending with " ."', () => {
    const text = writeRdfPatch({
      id: 'http://e/elements/a-2',
      prev: 'http://e/elements/a-1',
      deleted: ['<http://s> <http://p> "1" .'],
      added: ['<http://s> <http://p> "2" .', '<http://s> <http://q> <http://o> .'],
    });
    expect(text).toBe(
      [
        'H id <http://e/elements/a-2> .',
        'H prev <http://e/elements/a-1> .',
        'TX .',
        'D <http://s> <http://p> "1" .',
        'A <http://s> <http://p> "2" .',
        'A <http://s> <http://q> <http://o> .',
        'TC .',
        '',
      ].join('\n'),
    );
    expect(writeRdfPatch({ id: 'http://e/elements/a-1', deleted: [], added: [] })).toBe('H id <http://e/elements/a-1> .\nTX .\nTC .\n');
  });

  it('diffs two versions as sets: what left, what entered, nothing that stayed', () => {
    const before = new Set(['a', 'b', 'c']);
    const after = new Set(['c', 'd', 'b']);
    expect(diffTriples(before, after)).toEqual({ deleted: ['a'], added: ['d'] });
    expect(diffTriples(after, after)).toEqual({ deleted: [], added: [] });
  });

  it('keys triples by their N-Triples line, escapes included, and keeps blank node labels as written', () => {
    const tricky = quad(namedNode('http://s'), namedNode('http://p'), literal('line\nbreak "quoted" é', 'en'));
    const line = tripleLine(tricky);
    expect(line).toBe('<http://s> <http://p> "line\\nbreak \\"quoted\\" é"@en .');
    const set = tripleSetOf(`${line}\n_:x <http://p> <http://o> .\n${line}\n`);
    expect([...set]).toEqual([line, tripleLine(quad(blankNode('x'), namedNode('http://p'), namedNode('http://o')))]);
    expect([...set][1]).toBe('_:x <http://p> <http://o> .');
  });
});
