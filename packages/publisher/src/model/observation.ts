import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { prov, rdf, sosa, xsd } from './vocabulary.js';

const { namedNode, literal, quad, defaultGraph } = DataFactory;

/** One SOSA observation, before it is placed in an element's graph. */
export interface Observation {
  /** Local id, unique within the element: the observation IRI is `{graph}#{id}`. */
  readonly id: string;
  readonly sensor: string;
  readonly observedProperty: string;
  readonly featureOfInterest: string;
  /** Written as `sosa:hasSimpleResult`: integers as xsd:integer, other numbers as xsd:decimal. */
  readonly simpleResult: number | string | boolean;
}

function resultLiteral(value: Observation['simpleResult']) {
  if (typeof value === 'boolean') return literal(String(value), namedNode(xsd.boolean));
  if (typeof value === 'string') return literal(value);
  if (!Number.isFinite(value)) throw new RangeError(`Observation result must be finite, got ${value}`);
  return Number.isInteger(value)
    ? literal(String(value), namedNode(xsd.integer))
    : literal(String(value), namedNode(xsd.decimal));
}

/** `2026-11-22T16:20:05.123Z`: millisecond precision, UTC. */
export const dateTimeLiteral = (at: Date) => literal(at.toISOString(), namedNode(xsd.dateTime));

/**
 * The quads of one element: every observation in the named graph `graph`, and
 * `<graph> prov:generatedAtTime` in the default graph.
 */
export function elementQuads(graph: string, generatedAt: Date, observations: readonly Observation[]): Quad[] {
  const graphNode = namedNode(graph);
  const time = dateTimeLiteral(generatedAt);
  const quads: Quad[] = [quad(graphNode, namedNode(prov.generatedAtTime), time, defaultGraph())];
  for (const observation of observations) {
    const subject = namedNode(`${graph}#${observation.id}`);
    quads.push(
      quad(subject, namedNode(rdf.type), namedNode(sosa.Observation), graphNode),
      quad(subject, namedNode(sosa.madeBySensor), namedNode(observation.sensor), graphNode),
      quad(subject, namedNode(sosa.observedProperty), namedNode(observation.observedProperty), graphNode),
      quad(subject, namedNode(sosa.hasFeatureOfInterest), namedNode(observation.featureOfInterest), graphNode),
      quad(subject, namedNode(sosa.hasSimpleResult), resultLiteral(observation.simpleResult), graphNode),
      quad(subject, namedNode(sosa.resultTime), time, graphNode),
    );
  }
  return quads;
}
