/**
 * Fuzz: content negotiation answers every `Accept` and `Accept-Encoding` header — random bytes
 * of a field value, or well-formed lists of ranges, parameters and weights — with a format or
 * coding it offers, or with "none" (406), never with an exception; the memo agrees with it and
 * stays bounded. Runs FUZZ_RUNS values per property (test/support/fuzz.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodings } from '../../../../src/render/compress.js';
import { formatNames } from '@rdf-stream/protocol';
import { formats } from '../../../../src/render/output-formats.js';
import { acceptsIdentity, NegotiationCache, negotiateEncoding, negotiateFormat } from '../../../../src/render/headers/negotiate.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, headerValue } from '../../../support/fuzz.js';

const offeredTypes = [...formatNames.map((format) => formats[format].mediaType), 'application/json'];
const weight = fc.oneof(fc.constantFrom('0', '1', '0.5', '0.001', '1.000', '0.0', '-1', '2', 'abc', ''), fc.double({ min: 0, max: 1, noNaN: true }).map(String));
const parameter = fc.oneof(
  weight.map((q) => `q=${q}`),
  fc.constantFrom('charset=utf-8', 'profile="http://www.w3.org/ns/json-ld#compacted"', 'level=1', 'q', '=', ';', '"unterminated'),
);
const listOf = (item: fc.Arbitrary<string>) =>
  fc.array(fc.tuple(item, fc.array(parameter, { maxLength: 3 })), { maxLength: 6 }).map((ranges) =>
    ranges.map(([range, parameters]) => [range, ...parameters].join(';')).join(', '),
  );

const mediaRange = fc.oneof(
  fc.constantFrom(...offeredTypes, '*/*', 'text/*', 'application/*', 'TEXT/TURTLE', 'text/html', 'image/png', '*', '/', 'text/', '*/turtle'),
  headerValue([], 20),
);
const accept = fc.oneof(listOf(mediaRange), headerValue(['text/turtle', 'q=', ';', ',', '*/*', '"']));
const coding = fc.oneof(fc.constantFrom('br', 'gzip', 'identity', 'deflate', '*', 'GZIP', 'x-gzip', 'compress'), headerValue([], 12));
const acceptEncoding = fc.oneof(listOf(coding), headerValue(['gzip', 'br', 'identity', 'q=0', ';', ',', '*']));

describe('negotiation (property)', () => {
  it('any Accept gets an offered format or none, the same every time', () => {
    fc.assert(
      fc.property(accept, (header) => {
        const format = negotiateFormat(header);
        expect(format === undefined || formatNames.includes(format)).toBe(true);
        expect(negotiateFormat(header)).toBe(format);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('an Accept whose only acceptable range is one offered type gets that type', () => {
    fc.assert(
      fc.property(fc.constantFrom(...offeredTypes), listOf(fc.constantFrom('text/html', 'image/png', 'application/xml')), (offered, others) => {
        const expected = offered === 'application/json' ? 'jsonld' : formatNames.find((format) => formats[format].mediaType === offered);
        expect(negotiateFormat([offered, others].filter(Boolean).join(', '))).toBe(expected);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  // Issue 28: a profile (or any parameter but q and charset) once turned every RDF type into a 406.
  const quotedValue = fc.string({ unit: fc.constantFrom('a', 'Z', '9', ':', '/', '#', ',', ';', '=', ' ', '\\"', '\\\\'), maxLength: 30 }).map((value) => `"${value}"`);
  const tokenValue = fc.stringMatching(/^[A-Za-z0-9.\-_#]{1,12}$/);
  const ignoredParameter = fc
    .tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,8}$/).filter((name) => !['q', 'charset'].includes(name.toLowerCase())), fc.oneof(quotedValue, tokenValue))
    .map(([name, value]) => `${name}=${value}`);
  const utf8Charset = fc.constantFrom('charset=utf-8', 'charset=UTF-8', 'charset="utf-8"', 'Charset=Utf-8');

  it('parameters other than q and charset never change the format an Accept gets; charset=utf-8 never makes it 406', () => {
    const offeredRange = fc.constantFrom(...offeredTypes, '*/*', 'text/*', 'application/*');
    const others = fc.array(fc.tuple(fc.constantFrom('text/html', 'image/png', ...offeredTypes), fc.constantFrom('', ';q=0.3', ';q=0')), { maxLength: 4 });
    const ignoredParameters = fc.array(ignoredParameter, { minLength: 1, maxLength: 4 });
    const weight = fc.constantFrom('', ';q=0.5', ';q=1');
    fc.assert(
      fc.property(offeredRange, others, ignoredParameters, utf8Charset, weight, (range, rest, parameters, charset, q) => {
        const tail = rest.map(([type, restWeight]) => `, ${type}${restWeight}`).join('');
        const plain = `${range}${q}${tail}`;
        expect(negotiateFormat(`${range};${parameters.join(';')}${q}${tail}`)).toBe(negotiateFormat(plain));
        // charset=utf-8 makes its range more specific (RFC 9110 §12.5.1), which may reorder the
        // ranking; but with nothing refused, the range still makes some format acceptable.
        if (!rest.some(([, restWeight]) => restWeight === ';q=0')) {
          expect(negotiateFormat(`${range};${charset};${parameters.join(';')}${q}${tail}`)).toBeDefined();
        }
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('any Accept-Encoding gets an offered coding or none; identity is chosen only where acceptable, and always something where it is', () => {
    fc.assert(
      fc.property(acceptEncoding, (header) => {
        const encoding = negotiateEncoding(header);
        expect(encoding === undefined || encodings.includes(encoding)).toBe(true);
        if (encoding === 'identity') expect(acceptsIdentity(header)).toBe(true);
        if (acceptsIdentity(header)) expect(encoding).toBeDefined();
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('the memo answers as negotiation does and holds at most its limit of header values', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(accept, acceptEncoding), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 8 }), (headers, maxEntries) => {
        const cache = new NegotiationCache(maxEntries);
        for (const [acceptHeader, encodingHeader] of [...headers, ...headers]) {
          expect(cache.format(acceptHeader)).toBe(negotiateFormat(acceptHeader));
          expect(cache.encoding(encodingHeader)).toBe(negotiateEncoding(encodingHeader));
        }
        expect(cache.size).toBeLessThanOrEqual(2 * maxEntries);
      }),
      { numRuns: Math.ceil(FUZZ_RUNS / 10) },
    );
  }, FUZZ_TIMEOUT_MS);
});
