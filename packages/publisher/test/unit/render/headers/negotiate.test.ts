import { describe, expect, it } from 'vitest';
import {
  acceptsIdentity,
  NegotiationCache,
  negotiateEncoding,
  negotiateFormat,
  negotiateSseEncoding,
} from '../../../../src/render/headers/negotiate.js';

describe('negotiateFormat', () => {
  it.each([
    [undefined, 'turtle'],
    ['', 'turtle'],
    ['*/*', 'turtle'],
    ['text/turtle', 'turtle'],
    ['application/trig', 'trig'],
    ['application/n-triples', 'ntriples'],
    ['application/n-quads', 'nquads'],
    ['application/ld+json', 'jsonld'],
    ['application/json', 'jsonld'],
    ['application/*', 'trig'],
    ['text/turtle;q=0.5, application/ld+json', 'jsonld'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'turtle'],
    ['TEXT/TURTLE', 'turtle'],
    // Issue 28: parameters other than q must not defeat negotiation.
    ['application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted"', 'jsonld'],
    ['application/ld+json; profile="http://www.w3.org/ns/json-ld#expanded"', 'jsonld'],
    ['application/ld+json;profile="http://www.w3.org/ns/json-ld#flattened http://www.w3.org/ns/json-ld#compacted"', 'jsonld'],
    ['application/ld+json;profile="urn:example:a,b;c";q=0.9, text/turtle;q=0.5', 'jsonld'],
    ['text/turtle;charset=utf-8', 'turtle'],
    ['text/turtle; charset="UTF-8"', 'turtle'],
    ['application/n-quads;charset=utf-8;q=1.0, application/ld+json;q=0.9', 'nquads'],
    ['application/json;charset=utf-8', 'jsonld'],
    ['text/turtle;level=1', 'turtle'],
    ['text/turtle;charset=iso-8859-1, application/trig;q=0.1', 'trig'],
  ])('Accept %j → %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });

  it.each([
    'text/html',
    'application/rdf+xml',
    'image/*',
    'text/turtle;q=0',
    // We send UTF-8 only: a client that takes only another charset gets 406, not bytes it cannot read.
    'text/turtle;charset=iso-8859-1',
    'application/ld+json;charset=utf-16',
    '*/*;charset=us-ascii',
  ])('Accept %j is not acceptable', (accept) => {
    expect(negotiateFormat(accept)).toBeUndefined();
  });
});

describe('negotiateEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1, br;q=0.9', 'gzip'],
    ['br;q=1, gzip;q=0.5', 'br'],
    ['deflate', 'identity'],
    ['*', 'br'],
  ])('Accept-Encoding %j → %s', (header, encoding) => {
    expect(negotiateEncoding(header)).toBe(encoding);
  });

  it('refuses when identity is excluded and nothing else fits', () => {
    expect(negotiateEncoding('deflate, identity;q=0')).toBeUndefined();
  });
});

describe('negotiateSseEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    // What browsers and undici's fetch send: br is preferred for documents, but an event stream
    // has no brotli coding whose events decode one by one.
    ['gzip, deflate, br, zstd', 'gzip'],
    ['br', 'identity'],
    ['deflate', 'identity'],
    ['gzip;q=0', 'identity'],
    ['gzip;q=0.5, identity', 'identity'],
    ['*', 'gzip'],
  ])('Accept-Encoding %j → %s', (header, encoding) => {
    expect(negotiateSseEncoding(header)).toBe(encoding);
  });

  it('refuses when identity is excluded and gzip is not accepted', () => {
    expect(negotiateSseEncoding('br, identity;q=0')).toBeUndefined();
    expect(negotiateSseEncoding('*;q=0')).toBeUndefined();
  });
});

describe('acceptsIdentity', () => {
  it.each([
    [undefined, true],
    ['gzip', true],
    ['gzip, identity;q=0', false],
    ['*;q=0', false],
    ['*;q=0, identity', true],
  ])('Accept-Encoding %j → %s', (header, accepted) => {
    expect(acceptsIdentity(header)).toBe(accepted);
  });
});

describe('NegotiationCache', () => {
  it('returns the same answers as the uncached functions, including "not acceptable"', () => {
    const cache = new NegotiationCache(2);
    for (let round = 0; round < 2; round++) {
      expect(cache.format('text/html')).toBeUndefined();
      expect(cache.format('application/ld+json')).toBe('jsonld');
      expect(cache.format('application/trig')).toBe('trig');
      expect(cache.encoding('gzip')).toBe('gzip');
      expect(cache.sseEncoding('gzip, deflate, br')).toBe('gzip');
      expect(cache.sseEncoding('br, identity;q=0')).toBeUndefined();
    }
  });

  it('works with memoisation disabled (0 entries)', () => {
    expect(new NegotiationCache(0).format('text/turtle')).toBe('turtle');
  });
});
