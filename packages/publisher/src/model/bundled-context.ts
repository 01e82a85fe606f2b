import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the JSON-LD context is served; clients map this path to their bundled copy. */
export const CONTEXT_PATH = '/contexts/sosa-stream.jsonld';

const candidates = [
  // installed package: ontologies/ is copied next to dist/ at build time
  new URL('../../ontologies/context/sosa-stream.jsonld', import.meta.url),
  // repository checkout: packages/publisher/src/model → ontologies/
  new URL('../../../../ontologies/context/sosa-stream.jsonld', import.meta.url),
];

/** The bundled context document (bytes as served, and parsed). Never fetched from anywhere. */
export function loadBundledContext(): { bytes: Buffer; document: { '@context': Record<string, unknown> } } {
  const file = candidates.find((candidate) => existsSync(fileURLToPath(candidate)));
  if (file === undefined) throw new Error('The bundled JSON-LD context (ontologies/context/sosa-stream.jsonld) is missing');
  const bytes = readFileSync(file);
  return { bytes, document: JSON.parse(bytes.toString('utf8')) as { '@context': Record<string, unknown> } };
}
