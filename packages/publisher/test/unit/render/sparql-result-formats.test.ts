import { describe, expect, it } from 'vitest';
import { negotiateResultMediaTypes } from '../../../src/render/sparql-result-formats.js';

describe('negotiateResultMediaTypes', () => {
  it("takes each kind's default without Accept, or with */*", () => {
    const defaults = { bindings: 'application/sparql-results+json', boolean: 'application/sparql-results+json', quads: 'text/turtle' };
    expect(negotiateResultMediaTypes(undefined)).toEqual(defaults);
    expect(negotiateResultMediaTypes('')).toEqual(defaults);
    expect(negotiateResultMediaTypes('*/*')).toEqual(defaults);
  });

  it('picks per kind what the client prefers among what that kind is written in', () => {
    // What YASGUI sends for a query of unknown kind.
    const yasgui = 'application/sparql-results+json,*/*;q=0.9';
    expect(negotiateResultMediaTypes(yasgui)).toEqual({ bindings: 'application/sparql-results+json', boolean: 'application/sparql-results+json', quads: 'text/turtle' });
    expect(negotiateResultMediaTypes('text/csv, application/n-triples;q=0.5')).toEqual({ bindings: 'text/csv', boolean: undefined, quads: 'application/n-triples' });
    expect(negotiateResultMediaTypes('application/sparql-results+xml')).toEqual({ bindings: 'application/sparql-results+xml', boolean: 'application/sparql-results+xml', quads: undefined });
  });

  it('takes none for what no kind is written in', () => {
    expect(negotiateResultMediaTypes('image/png')).toEqual({ bindings: undefined, boolean: undefined, quads: undefined });
  });
});
