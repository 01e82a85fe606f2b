import type { Quad } from '@rdfjs/types';
import { readFileSync } from 'node:fs';
import { Parser } from 'n3';
import { ontologyIris, RDF_STREAM_IRI_BASE } from '@rdf-stream/protocol';
import { bundledOntologyFile } from './bundled-context.js';

const OWL_VERSION_IRI = 'http://www.w3.org/2002/07/owl#versionIRI';

/** The bundled file (in `ontologies/`) of each document of this project's IRIs. */
const bundledFiles: ReadonlyArray<readonly [iri: string, file: string]> = [
  [ontologyIris.vocabulary, 'vocab.ttl'],
  [ontologyIris.profile, 'sosa-profile.ttl'],
  [ontologyIris.shapes, 'shapes/stream-element.shacl.ttl'],
];

/** One document of this project's IRIs, as the bundled Turtle file has it. */
export interface OntologyDocument {
  /** The IRIs it is the document of: its own, and any `owl:versionIRI` it gives itself. */
  readonly iris: readonly string[];
  /** The file, as written (comments and layout kept). */
  readonly turtle: Buffer;
  readonly quads: readonly Quad[];
  readonly prefixes: Readonly<Record<string, string>>;
}

/**
 * Reads and parses the vocabulary, the SOSA profile and its SHACL shapes from the publisher's
 * own `ontologies/` (where the shapes validated on ingest come from too). Throws, naming the
 * file, if one is missing or is not Turtle: the publisher does not start without them.
 */
export function loadBundledOntologies(): OntologyDocument[] {
  return bundledFiles.map(([iri, file]) => {
    const path = bundledOntologyFile(file);
    const turtle = readFileSync(path);
    const prefixes: Record<string, string> = {};
    let quads: Quad[];
    try {
      quads = new Parser({ format: 'text/turtle' }).parse(turtle.toString('utf8'), null, (prefix, namespace) => {
        prefixes[prefix] = namespace.value;
      });
    } catch (error) {
      throw new Error(`ontologies/${file}: ${(error as Error).message}`, { cause: error });
    }
    const versions = quads
      .filter((q) => q.subject.value === iri && q.predicate.value === OWL_VERSION_IRI && q.object.value.startsWith(RDF_STREAM_IRI_BASE))
      .map((q) => q.object.value);
    return { iris: [iri, ...versions], turtle, quads, prefixes };
  });
}
