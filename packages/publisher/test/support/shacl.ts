import { fileURLToPath } from 'node:url';
import type { Quad } from '@rdfjs/types';
import { type ShapeViolation, ShapeValidator } from '../../src/model/shape-validator.js';

export type ShaclViolation = ShapeViolation;

// packages/publisher/test/support/ → repository root
const shapesFile = fileURLToPath(new URL('../../../../ontologies/shapes/stream-element.shacl.ttl', import.meta.url));
const validator = new ShapeValidator(shapesFile);

/**
 * Validates an element against ontologies/shapes/stream-element.shacl.ttl with a real SHACL
 * engine (shacl-engine), over all of its triples in one graph, as the shapes expect.
 */
export async function validateElement(quads: Iterable<Quad>): Promise<{ conforms: boolean; violations: ShaclViolation[] }> {
  const report = await validator.validate(quads);
  return { conforms: report.conforms, violations: [...report.violations] };
}
