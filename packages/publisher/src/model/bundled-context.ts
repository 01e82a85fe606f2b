import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sosaStreamContext } from '@rdf-stream/protocol';

/** The path of a file of `ontologies/`, in an installed package or in a repository checkout. */
export function bundledOntologyFile(relative: string): string {
  const candidates = [
    // installed package: ontologies/ is copied next to dist/ at build time
    new URL(`../../ontologies/${relative}`, import.meta.url),
    // repository checkout: packages/publisher/src/model → ontologies/
    new URL(`../../../../ontologies/${relative}`, import.meta.url),
  ].map((url) => fileURLToPath(url));
  const file = candidates.find((candidate) => existsSync(candidate));
  if (file === undefined) throw new Error(`The bundled file ontologies/${relative} is missing`);
  return file;
}

/** The JSON-LD context (`@rdf-stream/protocol`'s `sosaStreamContext`): bytes as served, and parsed. Never fetched from anywhere. */
export function loadBundledContext(): { bytes: Buffer; document: { '@context': Record<string, unknown> } } {
  return { bytes: Buffer.from(`${JSON.stringify(sosaStreamContext, null, 2)}\n`), document: sosaStreamContext };
}

/** The bundled SHACL shapes of a stream element. */
export const bundledShapesFile = () => bundledOntologyFile('shapes/stream-element.shacl.ttl');
