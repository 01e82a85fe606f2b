/**
 * Fuzz: `parseRdfInput` — what every ingest body goes through — returns quads or refuses the
 * body with an `RdfInputError` whose message is the parser's word on the document, for valid
 * bodies with random edits and for noise, in every format: never another exception, never a
 * JavaScript error's message. Without HTTP, so many more bodies than app.property.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mediaTypes as rdfMediaTypes } from '@rdf-stream/protocol';
import type { InputFormat } from '../../../src/model/input-formats.js';
import { parseRdfInput, RdfInputError } from '../../../src/model/rdf-input.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, INTERNAL_ERROR_MESSAGE } from '../../support/fuzz.js';
import { mutatedBody, randomBody, validBodies } from '../../support/fuzz-bodies.js';

const formatOf = (mediaType: string) => (Object.keys(rdfMediaTypes) as InputFormat[]).find((format) => rdfMediaTypes[format] === mediaType)!;
const options = (format: InputFormat) => ({
  format,
  baseIri: 'https://example.org/streams/sensors/',
  limits: { maxTriples: 10_000, maxLiteralChars: 65_536, maxIriChars: 4_096, maxJsonDepth: 64 },
  contexts: new Map<string, unknown>(),
});

async function expectParsedOrRefused(text: string, format: InputFormat): Promise<void> {
  try {
    await parseRdfInput(text, options(format));
  } catch (error) {
    expect(error).toBeInstanceOf(RdfInputError);
    expect((error as RdfInputError).message).not.toMatch(INTERNAL_ERROR_MESSAGE);
  }
}

describe('parseRdfInput (property)', () => {
  it.each(validBodies)('the unedited %s body is valid: the edits start from valid input', async (type, body) => {
    expect((await parseRdfInput(body, options(formatOf(type)))).length).toBeGreaterThan(0);
  });

  it('valid bodies with random edits, read in their format or another: quads, or an RdfInputError in the parser\'s words', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedBody, fc.option(fc.constantFrom(...Object.values(rdfMediaTypes)), { freq: 4 }), async ([type, body], readAs) => {
        await expectParsedOrRefused(body, formatOf(readAs ?? type));
      }),
      { numRuns: Math.ceil(FUZZ_RUNS / 2) },
    );
  }, FUZZ_TIMEOUT_MS);

  it('noise in every format: an RdfInputError in the parser\'s words, or quads', async () => {
    await fc.assert(
      fc.asyncProperty(randomBody, async ([type, body]) => {
        await expectParsedOrRefused(typeof body === 'string' ? body : body.toString('utf8'), formatOf(type));
      }),
      { numRuns: Math.ceil(FUZZ_RUNS / 2) },
    );
  }, FUZZ_TIMEOUT_MS);
});
