// Minimal typings for what the tests use of shacl-engine@1.1.2 (it ships none).
declare module 'shacl-engine' {
  import type { DataFactory, DatasetCore, DatasetCoreFactory, Term } from '@rdfjs/types';

  /** A grapoi pointer: the tests only read its terms. */
  export interface TermPointer {
    readonly term: Term | undefined;
    readonly terms: Term[];
  }

  /** One step of a parsed sh:path. */
  export interface PathStep {
    readonly quantifier: 'one' | 'zeroOrOne' | 'zeroOrMore' | 'oneOrMore';
    readonly start: 'subject' | 'object';
    readonly predicates: Term[];
  }

  export interface ValidationResult {
    readonly focusNode: TermPointer;
    /** null for results of node-level constraints (e.g. sh:xone, sh:nodeKind on a NodeShape). */
    readonly path: PathStep[] | null;
    /** sh:message of the shape (or constraint component), variables resolved; may be empty. */
    readonly message: Term[];
    readonly severity: Term;
    readonly constraintComponent: Term;
    readonly value: TermPointer | undefined;
  }

  export interface ValidationReport {
    readonly conforms: boolean;
    readonly results: ValidationResult[];
  }

  export class Validator {
    /** factory must also create datasets (rdf-ext does); the report is built with it. */
    constructor(shapes: DatasetCore, options: { factory: DataFactory & DatasetCoreFactory });
    /** data is a grapoi-style pointer description, not a bare dataset. */
    validate(data: { dataset: DatasetCore; terms?: Term[] }): Promise<ValidationReport>;
  }
}
