import type { Quad, Term } from '@rdfjs/types';
import { type Observation, uniqueLocalId } from './observation.js';
import { ns, qudt, rdf, sosa, xsd } from './vocabulary.js';

/** Observations read from RDF, and the subjects that could not be read (with why). */
export interface ExtractedObservations {
  readonly observations: Observation[];
  readonly rejected: ReadonlyArray<{ readonly subject: string; readonly reason: string }>;
}

const numericTypes = new Set(
  ['integer', 'decimal', 'double', 'float', 'int', 'long', 'short', 'nonNegativeInteger', 'positiveInteger'].map(
    (name) => `${ns.xsd}${name}`,
  ),
);

function literalValue(term: Term): number | string | boolean | undefined {
  if (term.termType !== 'Literal') return undefined;
  if (numericTypes.has(term.datatype.value)) {
    const value = Number(term.value);
    return Number.isFinite(value) ? value : undefined;
  }
  if (term.datatype.value === xsd.boolean) return term.value === 'true' || term.value === '1';
  return term.value;
}

function dateTime(term: Term | undefined): Date | undefined {
  if (term?.termType !== 'Literal') return undefined;
  const at = new Date(term.value);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** A local id for `{graph}#{id}`: the subject's fragment or last path segment. */
function localId(subject: Term, taken: Set<string>): string {
  const raw = subject.termType === 'NamedNode' ? (subject.value.split(/[#/]/).filter(Boolean).pop() ?? '') : subject.value;
  return uniqueLocalId(raw, taken);
}

/**
 * Reads SOSA observations out of RDF (any graphs): every subject typed `sosa:Observation` or
 * having `sosa:madeBySensor`. Each needs an IRI for its sensor, observed property and feature of
 * interest, and a result: `sosa:hasSimpleResult` (a literal), or `sosa:hasResult` with a
 * `qudt:numericValue` and a `qudt:hasUnit`. `sosa:resultTime` and `sosa:phenomenonTime`
 * (xsd:dateTime literals) are kept when present. Other triples are not carried over.
 */
export function extractObservations(quads: Iterable<Quad>): ExtractedObservations {
  const bySubject = new Map<string, { subject: Term; properties: Map<string, Term[]> }>();
  const observationSubjects: string[] = [];
  for (const q of quads) {
    const key = `${q.subject.termType}:${q.subject.value}`;
    let entry = bySubject.get(key);
    if (!entry) bySubject.set(key, (entry = { subject: q.subject, properties: new Map() }));
    const values = entry.properties.get(q.predicate.value);
    if (values) values.push(q.object);
    else entry.properties.set(q.predicate.value, [q.object]);
    const isObservation =
      (q.predicate.value === rdf.type && q.object.value === sosa.Observation) || q.predicate.value === sosa.madeBySensor;
    if (isObservation && !observationSubjects.includes(key)) observationSubjects.push(key);
  }

  const observations: Observation[] = [];
  const rejected: Array<{ subject: string; reason: string }> = [];
  const taken = new Set<string>();
  for (const key of observationSubjects) {
    const { subject, properties } = bySubject.get(key)!;
    const one = (predicate: string) => properties.get(predicate)?.[0];
    const iri = (predicate: string) => {
      const term = one(predicate);
      return term?.termType === 'NamedNode' ? term.value : undefined;
    };
    const sensor = iri(sosa.madeBySensor);
    const observedProperty = iri(sosa.observedProperty);
    const featureOfInterest = iri(sosa.hasFeatureOfInterest);
    const reject = (reason: string) => rejected.push({ subject: subject.value, reason });
    if (!sensor || !observedProperty || !featureOfInterest) {
      reject('needs an IRI for sosa:madeBySensor, sosa:observedProperty and sosa:hasFeatureOfInterest');
      continue;
    }
    let simpleResult: Observation['simpleResult'] | undefined;
    let unit: string | undefined;
    const simple = one(sosa.hasSimpleResult);
    const resultNode = one(sosa.hasResult);
    if (simple) {
      simpleResult = literalValue(simple);
    } else if (resultNode) {
      const result = bySubject.get(`${resultNode.termType}:${resultNode.value}`)?.properties;
      const value = result?.get(qudt.numericValue)?.[0];
      const unitTerm = result?.get(qudt.hasUnit)?.[0];
      simpleResult = value ? literalValue(value) : undefined;
      if (typeof simpleResult !== 'number' || unitTerm?.termType !== 'NamedNode') {
        reject('sosa:hasResult needs a numeric qudt:numericValue and a qudt:hasUnit IRI');
        continue;
      }
      unit = unitTerm.value;
    }
    if (simpleResult === undefined) {
      reject('needs a literal sosa:hasSimpleResult or a sosa:hasResult');
      continue;
    }
    const resultTime = dateTime(one(sosa.resultTime));
    const phenomenonTime = dateTime(one(sosa.phenomenonTime));
    observations.push({
      id: localId(subject, taken),
      sensor,
      observedProperty,
      featureOfInterest,
      simpleResult,
      ...(unit === undefined ? {} : { unit }),
      ...(resultTime === undefined ? {} : { resultTime }),
      ...(phenomenonTime === undefined ? {} : { phenomenonTime }),
    });
  }
  return { observations, rejected };
}
