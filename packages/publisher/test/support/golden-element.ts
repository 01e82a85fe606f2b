import { elementQuads } from '../../src/model/observation.js';
import { streamIri } from '@rdf-stream/protocol';
import { elementGraphIri, type StreamElement } from '../../src/model/stream-element.js';
import { ParkingSimulator } from '../../src/source/parking-simulator.js';

/** The epoch of the log that the golden element (and the examples in ontologies/) comes from. */
export const GOLDEN_EPOCH = 'demo2026ab';

/** Element 42 of the demo stream as in ontologies/examples/parking-element.* (seed 1, 3 facilities). */
export function goldenElement(): StreamElement {
  const base = 'http://127.0.0.1:8080';
  const stream = streamIri(base, 'parking');
  const simulator = new ParkingSimulator({ streamIri: stream, facilities: 3, intervalMs: 5000, seed: 1 });
  const generatedAt = new Date('2026-11-22T16:20:05.123Z');
  const graph = elementGraphIri(base, 'parking', GOLDEN_EPOCH, 42);
  return { streamId: 'parking', epoch: GOLDEN_EPOCH, seq: 42, graph, generatedAt, quads: elementQuads(graph, generatedAt, simulator.step()) };
}
