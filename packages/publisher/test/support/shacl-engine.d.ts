// Minimal typings for what the tests use of shacl-engine@1.1.2 (it ships none).
declare module 'shacl-engine' {
  import type { DataFactory, DatasetCore, DatasetCoreFactory, Term } from '@rdfjs/types';

  export interface ValidationResult {
    focusNode?: { term: Term };
    path?: Array<{ predicates: Term[] }>;
    message: Term[];
    severity?: { term: Term };
  }

  export interface ValidationReport {
    conforms: boolean;
    results: ValidationResult[];
  }

  export class Validator {
    constructor(shapes: DatasetCore, options: { factory: DataFactory & DatasetCoreFactory });
    validate(data: { dataset: DatasetCore; terms?: Iterable<Term> }): Promise<ValidationReport>;
  }
}
