import { readFileSync } from 'node:fs';
import type { Quad } from '@rdfjs/types';
import { Parser } from 'n3';
import rdf from 'rdf-ext';
import { type PathStep, type ValidationResult, Validator } from 'shacl-engine';

/** One SHACL validation result, in plain strings. */
export interface ShaclViolation {
  /** The node that failed (an observation, or the element's graph name). */
  focusNode: string;
  /** The property path that failed as an IRI (SPARQL syntax for complex paths), undefined for node-level constraints (sh:xone, sh:nodeKind). */
  path: string | undefined;
  /** The shape's sh:message, or the name of the constraint component when the shape has none. */
  message: string;
}

// packages/publisher/test/support/ → repository root
const shapesFile = new URL('../../../../ontologies/shapes/stream-element.shacl.ttl', import.meta.url);

let validator: Validator | undefined;

/** The shapes are parsed and compiled once per test worker. */
function shapesValidator(): Validator {
  validator ??= new Validator(rdf.dataset(new Parser({ format: 'text/turtle' }).parse(readFileSync(shapesFile, 'utf8'))), {
    factory: rdf,
  });
  return validator;
}

function pathStepToString(step: PathStep): string {
  const iris = step.predicates.map((p) => (step.predicates.length > 1 ? `<${p.value}>` : p.value));
  let text = iris.length > 1 ? `(${iris.join('|')})` : (iris[0] ?? '');
  if (step.start === 'object') text = `^${text}`;
  const quantifier = { one: '', zeroOrOne: '?', zeroOrMore: '*', oneOrMore: '+' }[step.quantifier];
  return `${text}${quantifier}`;
}

function toViolation(result: ValidationResult): ShaclViolation {
  const path = result.path;
  const message = result.message.map((term) => term.value).join(' ');
  return {
    focusNode: result.focusNode.terms.map((term) => term.value).join(' '),
    path: path === null || path.length === 0 ? undefined : path.map(pathStepToString).join('/'),
    message: message !== '' ? message : (result.constraintComponent.value.split('#').pop() ?? result.constraintComponent.value),
  };
}

/**
 * Validates an element against ontologies/shapes/stream-element.shacl.ttl with a real SHACL
 * engine (shacl-engine). Every quad is first moved to the default graph: the shapes are written
 * for all of an element's triples in one graph, as its Turtle serialisation carries them.
 */
export async function validateElement(quads: Iterable<Quad>): Promise<{ conforms: boolean; violations: ShaclViolation[] }> {
  const dataset = rdf.dataset([...quads].map((q) => rdf.quad(q.subject, q.predicate, q.object, rdf.defaultGraph())));
  const report = await shapesValidator().validate({ dataset });
  return { conforms: report.conforms, violations: report.results.map(toViolation) };
}
