import type { Literal, Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { prov, qudt, rdf, sosa, xsd } from './vocabulary.js';

const { namedNode, literal, quad, defaultGraph } = DataFactory;

/** One SOSA observation, before it is placed in an element's graph. */
export interface Observation {
  /** Local id, unique within the element: the observation IRI is `{graph}#{id}` unless `iri` names it. */
  readonly id: string;
  /**
   * The observation's IRI when it is not the element's own `{graph}#{id}`: a state source names
   * each thing's current observation the same in every element (its result node is `{iri}-result`).
   */
  readonly iri?: string;
  readonly sensor: string;
  readonly observedProperty: string;
  readonly featureOfInterest: string;
  /**
   * Without `unit`, written as `sosa:hasSimpleResult`: integers as xsd:integer, other numbers as
   * xsd:decimal. With `unit`, it is the `qudt:numericValue` of the result (a number).
   */
  readonly simpleResult: number | string | boolean;
  /**
   * A QUDT unit IRI (e.g. `http://qudt.org/vocab/unit/DEG_C`): the result is then written as
   * `sosa:hasResult <{graph}#{id}-result>`, a `qudt:QuantityValue` with `qudt:numericValue`
   * and `qudt:hasUnit`.
   */
  readonly unit?: string;
  /** `sosa:resultTime`: when the result was produced. Defaults to the element's generation time. */
  readonly resultTime?: Date;
  /** `sosa:phenomenonTime`: when the property was observed (a replay keeps the original time here). */
  readonly phenomenonTime?: Date;
}

/** Longest local id kept. */
const MAX_LOCAL_ID_CHARS = 64;

/**
 * An IRI-safe local id (`[A-Za-z0-9_-]`, at most 64 characters) for `{graph}#{id}`, made unique
 * among `taken` with a `-2`, `-3`… suffix, and added to it.
 */
export function uniqueLocalId(raw: string, taken: Set<string>): string {
  const base = raw.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_LOCAL_ID_CHARS) || 'o';
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  taken.add(id);
  return id;
}

function resultLiteral(value: Observation['simpleResult']) {
  if (typeof value === 'boolean') return literal(String(value), namedNode(xsd.boolean));
  if (typeof value === 'string') return literal(value);
  if (!Number.isFinite(value)) throw new RangeError(`Observation result must be finite, got ${value}`);
  return Number.isInteger(value)
    ? literal(String(value), namedNode(xsd.integer))
    : literal(String(value), namedNode(xsd.decimal));
}

/**
 * `2026-11-22T16:20:05.123Z`: millisecond precision, UTC. Typed as RDF/JS, not n3's own `Literal`,
 * so that the published declarations need no `@types/n3`.
 */
export const dateTimeLiteral = (at: Date): Literal => literal(at.toISOString(), namedNode(xsd.dateTime));

/**
 * The quads of one element: every observation in the named graph `graph`, and
 * `<graph> prov:generatedAtTime` in the default graph.
 */
export function elementQuads(graph: string, generatedAt: Date, observations: readonly Observation[]): Quad[] {
  const graphNode = namedNode(graph);
  const time = dateTimeLiteral(generatedAt);
  const quads: Quad[] = [quad(graphNode, namedNode(prov.generatedAtTime), time, defaultGraph())];
  for (const observation of observations) {
    const subjectIri = observation.iri ?? `${graph}#${observation.id}`;
    const subject = namedNode(subjectIri);
    quads.push(
      quad(subject, namedNode(rdf.type), namedNode(sosa.Observation), graphNode),
      quad(subject, namedNode(sosa.madeBySensor), namedNode(observation.sensor), graphNode),
      quad(subject, namedNode(sosa.observedProperty), namedNode(observation.observedProperty), graphNode),
      quad(subject, namedNode(sosa.hasFeatureOfInterest), namedNode(observation.featureOfInterest), graphNode),
    );
    if (observation.unit === undefined) {
      quads.push(quad(subject, namedNode(sosa.hasSimpleResult), resultLiteral(observation.simpleResult), graphNode));
    } else {
      if (typeof observation.simpleResult !== 'number') {
        throw new RangeError(`A result with a unit must be a number, got ${JSON.stringify(observation.simpleResult)}`);
      }
      const result = namedNode(`${subjectIri}-result`);
      quads.push(
        quad(subject, namedNode(sosa.hasResult), result, graphNode),
        quad(result, namedNode(rdf.type), namedNode(qudt.QuantityValue), graphNode),
        quad(result, namedNode(qudt.numericValue), resultLiteral(observation.simpleResult), graphNode),
        quad(result, namedNode(qudt.hasUnit), namedNode(observation.unit), graphNode),
      );
    }
    quads.push(
      quad(
        subject,
        namedNode(sosa.resultTime),
        observation.resultTime ? dateTimeLiteral(observation.resultTime) : time,
        graphNode,
      ),
    );
    if (observation.phenomenonTime) {
      quads.push(quad(subject, namedNode(sosa.phenomenonTime), dateTimeLiteral(observation.phenomenonTime), graphNode));
    }
  }
  return quads;
}

/**
 * Places the triples of an ingested or received RDF document in an element: every quad moves to
 * the named graph `graph` (graph names of the input are dropped), and `<graph>
 * prov:generatedAtTime` is added to the default graph.
 */
export function elementQuadsFromTriples(graph: string, generatedAt: Date, triples: readonly Quad[]): Quad[] {
  const graphNode = namedNode(graph);
  const quads: Quad[] = [quad(graphNode, namedNode(prov.generatedAtTime), dateTimeLiteral(generatedAt), defaultGraph())];
  for (const triple of triples) quads.push(quad(triple.subject, triple.predicate, triple.object, graphNode));
  return quads;
}
