import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'n3';
import { afterAll, describe, expect, it } from 'vitest';
import { ShapeValidator } from '../../../src/model/shape-validator.js';
import { ThreadedShapeValidator, ValidationQueueFullError } from '../../../src/model/threaded-shape-validator.js';

const shapesFile = fileURLToPath(new URL('../../../../../ontologies/shapes/stream-element.shacl.ttl', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'shapes-'));
const validators: ThreadedShapeValidator[] = [];
const threaded = (file = shapesFile, maxPending = 8) => {
  const validator = new ThreadedShapeValidator(file, maxPending);
  validators.push(validator);
  return validator;
};
afterAll(async () => {
  await Promise.all(validators.map((validator) => validator.close()));
  rmSync(dir, { recursive: true, force: true });
});

const element = (withSensor: boolean) =>
  new Parser().parse(`@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>.
<http://example.org/o/1> a sosa:Observation; ${withSensor ? 'sosa:madeBySensor <http://example.org/s/1>;' : ''}
  sosa:observedProperty <http://example.org/p>; sosa:hasFeatureOfInterest <http://example.org/f>;
  sosa:hasSimpleResult 3; sosa:resultTime "2026-11-22T10:00:00Z"^^xsd:dateTime.
_:b a sosa:Observation.`);

describe('ThreadedShapeValidator', () => {
  it('reports exactly what the in-thread validator reports', async () => {
    const inThread = new ShapeValidator(shapesFile);
    const worker = threaded();
    for (const quads of [element(true), element(false)]) {
      expect(await worker.validate(quads)).toEqual(await inThread.validate(quads));
    }
    expect((await worker.validate(element(false))).violations.length).toBeGreaterThan(1);
  });

  it('refuses a validation beyond maxPending at once, and takes the next one after', async () => {
    const worker = threaded(shapesFile, 1);
    const first = worker.validate(element(true));
    await expect(worker.validate(element(true))).rejects.toBeInstanceOf(ValidationQueueFullError);
    // The blank-node observation lacks sensor, property, feature of interest, result and result time.
    expect((await first).violations).toHaveLength(5);
    expect((await worker.validate(element(true))).violations).toHaveLength(5);
  });

  it('fails load() with the file named when the shapes cannot be parsed', async () => {
    const broken = join(dir, 'broken.ttl');
    writeFileSync(broken, '@prefix sh: <http://www.w3.org/ns/shacl#>.\n<a> sh:path .\n');
    await expect(threaded(broken).load()).rejects.toThrow(`SHACL shapes ${broken}`);
  });

  it('starts a new worker after close()', async () => {
    const worker = threaded();
    await worker.load();
    await worker.close();
    expect((await worker.validate(element(true))).conforms).toBe(false);
  });
});
