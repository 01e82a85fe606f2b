import { describe, expect, it } from 'vitest';
import { PublisherError } from '../../../../src/errors.js';
import { NegotiationCache } from '../../../../src/render/headers/negotiate.js';
import { acceptableTypes, formatParamOf, requestedFormat } from '../../../../src/render/headers/requested-format.js';

const negotiation = new NegotiationCache(16);

/** The code of the PublisherError `ask` throws. */
function refusal(ask: () => unknown): string {
  try {
    ask();
  } catch (error) {
    if (error instanceof PublisherError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('requestedFormat', () => {
  it('takes ?format= over the Accept header', () => {
    expect(requestedFormat('ntriples', 'application/ld+json', negotiation)).toBe('ntriples');
  });

  it('negotiates the Accept header when no ?format= is given', () => {
    expect(requestedFormat(undefined, 'application/ld+json', negotiation)).toBe('jsonld');
    expect(requestedFormat(undefined, undefined, negotiation)).toBe('turtle');
  });

  it('refuses an unknown ?format= (400) and an Accept header that nothing offered matches (406)', () => {
    expect(refusal(() => requestedFormat('rdfxml', undefined, negotiation))).toBe('PUB_ERR_UNKNOWN_FORMAT');
    expect(refusal(() => requestedFormat(undefined, 'image/png', negotiation))).toBe('PUB_ERR_NOT_ACCEPTABLE');
  });

  it('names every acceptable media type, aliases included', () => {
    expect(acceptableTypes).toEqual(expect.arrayContaining(['text/turtle', 'application/ld+json', 'application/json']));
  });
});

describe('formatParamOf', () => {
  it('reads the first ?format= when repeated, and nothing from a query without one', () => {
    expect(formatParamOf({ format: ['trig', 'turtle'] })).toBe('trig');
    expect(formatParamOf({ format: 'nquads' })).toBe('nquads');
    expect(formatParamOf({})).toBeUndefined();
    expect(formatParamOf(undefined)).toBeUndefined();
  });
});
