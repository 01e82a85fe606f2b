/** Ingest bodies for the fuzz tests: valid ones in every format, their mutations, and noise. */
import fc from 'fast-check';
import { mediaTypes as rdfMediaTypes } from '@rdf-stream/protocol';
import { trickyPieces, trickyString } from './fuzz.js';

const SOSA = 'http://www.w3.org/ns/sosa/';
const XSD = 'http://www.w3.org/2001/XMLSchema#';

/** One SOSA observation (satisfies the bundled shapes) in N-Triples: also Turtle, TriG and N-Quads. */
export const observationNTriples = (id: number) =>
  [
    `<https://example.org/o/${id}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${SOSA}Observation> .`,
    `<https://example.org/o/${id}> <${SOSA}madeBySensor> <https://example.org/s/1> .`,
    `<https://example.org/o/${id}> <${SOSA}observedProperty> <https://example.org/p> .`,
    `<https://example.org/o/${id}> <${SOSA}hasFeatureOfInterest> <https://example.org/f> .`,
    `<https://example.org/o/${id}> <${SOSA}hasSimpleResult> "${id}"^^<${XSD}integer> .`,
    `<https://example.org/o/${id}> <${SOSA}resultTime> "2026-11-22T10:00:00Z"^^<${XSD}dateTime> .`,
    '',
  ].join('\n');

export const validBodies: ReadonlyArray<readonly [string, string]> = [
  ['text/turtle', `@prefix sosa: <${SOSA}>. @prefix xsd: <${XSD}>.\n<obs/1> a sosa:Observation; sosa:madeBySensor <https://example.org/s/1>;\n  sosa:observedProperty <https://example.org/p>; sosa:hasFeatureOfInterest <https://example.org/f>;\n  sosa:hasSimpleResult 21.5; sosa:resultTime "2026-11-22T10:00:00.000Z"^^xsd:dateTime.\n`],
  // More of Turtle's grammar, for the edits to break: SPARQL-style PREFIX and BASE, a collection,
  // nested blank nodes, long and single-quoted strings, escapes, a language tag.
  [
    'text/turtle',
    `PREFIX sosa: <${SOSA}>\nBASE <https://example.org/>\n<obs/9> a sosa:Observation; <list> (1 2.5 -3e2 true "x"@en-GB """multi\nline""" 'single' [ <p> _:b1 ]);\n  <p> <o>, <o2>; <q> "\\u00e9\\t"^^<${XSD}string> .\n_:b1 <q> "v" .\n`,
  ],
  ['application/n-triples', observationNTriples(1)],
  ['application/n-quads', observationNTriples(2).replaceAll(' .\n', ' <https://example.org/g> .\n')],
  ['application/trig', `<https://example.org/g> {\n${observationNTriples(3)}}\n`],
  [
    'application/ld+json',
    JSON.stringify({
      '@context': { sosa: SOSA, xsd: XSD, resultTime: { '@id': 'sosa:resultTime', '@type': 'xsd:dateTime' } },
      '@id': 'https://example.org/o/4',
      '@type': 'sosa:Observation',
      'sosa:madeBySensor': { '@id': 'https://example.org/s/1' },
      'sosa:observedProperty': { '@id': 'https://example.org/p' },
      'sosa:hasFeatureOfInterest': { '@id': 'https://example.org/f' },
      'sosa:hasSimpleResult': 4,
      resultTime: '2026-11-22T10:00:00Z',
    }, null, 1),
  ],
];

/** Pieces of RDF syntax, and of what attacks its parsers. */
const rdfPieces = [
  ...trickyPieces, '<', '>', '"""', "'", '@prefix', '@base', 'PREFIX', '^^', '@en', '_:b', '.', ';', ',', '[', ']', '{', '}', '(', ')',
  '\\uD800', '\\U0010FFFF', '\\u0000', '"__proto__"', '"@context"', '"@import"', '"@id"', '"@graph"', '"@list"', '"@type"', '"@value"',
  '"http://127.0.0.1:1/context.jsonld"', '1e999', '-0', 'true', 'null', '[[[[[[[[', '{"a":{"a":{"a":', 'x'.repeat(300), '<:>', ':',
];

/** A valid body with up to five random edits: inserted pieces, cut or repeated spans, one character changed. */
export const mutatedBody = fc.constantFrom(...validBodies).chain(([type, body]) =>
  fc
    .array(
      fc.oneof(
        fc.tuple(fc.constant('insert' as const), fc.nat(), fc.constantFrom(...rdfPieces)),
        fc.tuple(fc.constant('cut' as const), fc.nat(), fc.nat({ max: 20 })),
        fc.tuple(fc.constant('repeat' as const), fc.nat(), fc.nat({ max: 200 })),
        fc.tuple(fc.constant('change' as const), fc.nat(), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
      ),
      { minLength: 1, maxLength: 5 },
    )
    .map((edits) => {
      let text = body;
      for (const [kind, at, what] of edits) {
        const position = at % (text.length + 1);
        if (kind === 'insert') text = `${text.slice(0, position)}${what}${text.slice(position)}`;
        else if (kind === 'cut') text = `${text.slice(0, position)}${text.slice(position + what)}`;
        else if (kind === 'repeat') text = `${text.slice(0, position + what)}${text.slice(position)}`;
        else text = `${text.slice(0, position)}${what}${text.slice(position + 1)}`;
      }
      return [type, text] as const;
    }),
);

/** Bodies from nowhere: bytes, tricky text, any JSON, deep nesting. */
export const randomBody = fc.tuple(
  fc.constantFrom(...Object.values(rdfMediaTypes)),
  fc.oneof(
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    trickyString(200),
    fc.json({ maxDepth: 6 }),
    fc.tuple(fc.nat({ max: 5_000 }), fc.constantFrom('[', '{"a":', '(', '[ ', '<a> <b> (')).map(([depth, opener]) => opener.repeat(depth)),
  ),
);
