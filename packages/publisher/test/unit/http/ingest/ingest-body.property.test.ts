/**
 * Fuzz: any `Content-Type` and `Content-Encoding` of an ingest request is either one the
 * publisher reads, or a 415 problem that echoes it bounded — never another exception. Runs
 * FUZZ_RUNS values per property (test/support/fuzz.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mediaTypes as rdfMediaTypes } from '@rdf-stream/protocol';
import { MAX_DETAIL_CHARS, PublisherError, TRUNCATION_MARK } from '../../../../src/errors.js';
import { decoderOf, formatOf } from '../../../../src/http/ingest/ingest-body.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, headerValue } from '../../../support/fuzz.js';

const accepted = Object.values(rdfMediaTypes);
const parameter = fc.constantFrom('charset=utf-8', 'charset=UTF8', 'charset="utf-8"', 'charset=latin1', 'profile="http://www.w3.org/ns/json-ld#expanded"', 'q=1', 'charset', '=', '"');
const contentType = fc.oneof(
  fc
    .tuple(fc.constantFrom(...accepted, 'text/plain', 'application/json', 'text/turtlex', '*/*', 'text/ turtle'), fc.array(parameter, { maxLength: 3 }), fc.boolean())
    .map(([type, parameters, upper]) => [upper ? type.toUpperCase() : type, ...parameters].join('; ')),
  headerValue([...accepted, ';', '=', '"', ',', ' ']),
);

/** A 415 that names the header bounded, or the value as parsed. */
function expectReadOrRefused<T>(read: () => T, check: (value: T) => void): void {
  let value: T;
  try {
    value = read();
  } catch (error) {
    expect(error).toBeInstanceOf(PublisherError);
    expect((error as PublisherError).code).toBe('PUB_ERR_UNSUPPORTED_MEDIA_TYPE');
    expect((error as PublisherError).detail!.length).toBeLessThanOrEqual(MAX_DETAIL_CHARS + TRUNCATION_MARK.length);
    return;
  }
  check(value);
}

describe('ingest request headers (property)', () => {
  it('any Content-Type is an accepted RDF format (with at most charset=utf-8, and profile for JSON-LD) or a 415', () => {
    fc.assert(
      fc.property(contentType, (header) => {
        expectReadOrRefused(
          () => formatOf(header),
          (format) => {
            const [type = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
            expect(type).toBe(rdfMediaTypes[format]);
            for (const parameter of parameters) expect(parameter).toMatch(/^(charset="?utf-?8"?|profile=.*)$/);
            const names = parameters.map((parameter) => parameter.split('=')[0]);
            expect(new Set(names).size).toBe(names.length);
          },
        );
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('any Content-Encoding is identity, gzip, br or deflate, or a 415', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom('gzip', 'GZIP', ' br ', 'deflate', 'x-gzip', 'identity', '', 'compress', 'gzip, br'), headerValue(['gzip', ','])), (header) => {
        expectReadOrRefused(
          () => decoderOf(header),
          () => expect(['gzip', 'x-gzip', 'br', 'deflate', 'identity', '']).toContain(header.trim().toLowerCase()),
        );
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);
});
