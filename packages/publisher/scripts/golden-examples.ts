/**
 * Writes ontologies/examples/parking-element.{ttl,trig,nt,nq,jsonld}: element 42 of the demo
 * stream (seed 1, 3 facilities) in every format. They are golden fixtures: a test renders the
 * same element and compares byte for byte. Regenerate deliberately: tsx scripts/golden-examples.ts
 */
import { writeFileSync } from 'node:fs';
import { formatNames } from '@rdf-stream/protocol';
import { goldenElement } from '../test/support/golden-element.js';
import { loadBundledContext } from '../src/model/bundled-context.js';
import { formats } from '../src/render/output-formats.js';
import { JsonLdWriter } from '../src/render/jsonld-writer.js';
import { renderElement } from '../src/render/render-element.js';

const jsonLd = new JsonLdWriter(loadBundledContext().document, 'http://127.0.0.1:8080/contexts/sosa-stream.jsonld');
const rendered = renderElement(goldenElement(), jsonLd);
for (const format of formatNames) {
  const file = new URL(`../../../ontologies/examples/parking-element.${formats[format].extension}`, import.meta.url);
  writeFileSync(file, rendered.bodies[format]);
  console.log(`wrote ${file.pathname}`);
}
