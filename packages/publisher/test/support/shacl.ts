import { readFileSync } from 'node:fs';
import type { Quad } from '@rdfjs/types';
import { Parser } from 'n3';
import rdf from 'rdf-ext';
import { Validator } from 'shacl-engine';

export interface ShaclViolation {
  readonly focusNode: string | undefined;
  readonly path: string | undefined;
  readonly message: string;
}

let validator: Validator | undefined;

function shapesValidator(): Validator {
  if (validator === undefined) {
    const text = readFileSync(new URL('../../../../ontologies/shapes/stream-element.shacl.ttl', import.meta.url), 'utf8');
    validator = new Validator(rdf.dataset(new Parser().parse(text)), { factory: rdf });
  }
  return validator;
}

/**
 * Validates an element against ontologies/shapes/stream-element.shacl.ttl with a real SHACL
 * engine (shacl-engine), over all of its triples in one graph, as the shapes expect.
 */
export async function validateElement(quads: Iterable<Quad>): Promise<{ conforms: boolean; violations: ShaclViolation[] }> {
  const dataset = rdf.dataset([...quads].map((q) => rdf.quad(q.subject, q.predicate, q.object)));
  const report = await shapesValidator().validate({ dataset });
  return {
    conforms: report.conforms,
    violations: report.results.map((result) => ({
      focusNode: result.focusNode?.term.value,
      path: result.path?.[0]?.predicates[0]?.value,
      message: result.message.map((term) => term.value).join(' '),
    })),
  };
}
