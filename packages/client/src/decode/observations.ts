import type { Quad, Term } from '@rdfjs/types';
import { namespaces, observationTerms as terms } from '@rdf-stream/protocol';

/** One SOSA observation of an element, as plain values. */
export interface Observation {
  /** The observation's IRI (or blank node label). */
  readonly observation: string;
  readonly featureOfInterest: string;
  readonly observedProperty: string;
  /**
   * The result, by its literal's datatype: a number for XSD's numeric types, a boolean for
   * `xsd:boolean`, else the lexical form (an IRI result is its IRI).
   */
  readonly value: number | string | boolean;
  /** A QUDT unit IRI (`sosa:hasResult [ qudt:numericValue …; qudt:hasUnit … ]`), else undefined. */
  readonly unit: string | undefined;
  /** `sosa:phenomenonTime`, when given as an `xsd:dateTime`. */
  readonly phenomenonTime: Date | undefined;
  /** `sosa:resultTime`, when given as an `xsd:dateTime`. */
  readonly resultTime: Date | undefined;
  /** `sosa:madeBySensor`. */
  readonly sensor: string | undefined;
}

const numericTypes = new Set(
  ['integer', 'decimal', 'double', 'float', 'long', 'int', 'short', 'byte', 'nonNegativeInteger', 'positiveInteger', 'nonPositiveInteger', 'negativeInteger', 'unsignedLong', 'unsignedInt', 'unsignedShort', 'unsignedByte'].map(
    (name) => `${namespaces.xsd}${name}`,
  ),
);
const XSD_BOOLEAN = `${namespaces.xsd}boolean`;

/**
 * The observations of an element's quads, in the order they appear: each subject with a
 * `sosa:hasFeatureOfInterest`, a `sosa:observedProperty` and a result — `sosa:hasSimpleResult`,
 * or `sosa:hasResult` with a `qudt:numericValue` and a `qudt:hasUnit` (or `qudt:unit`), the
 * result node named or blank. Subjects lacking one of these are skipped; the first value of a
 * repeated property is taken. Graph names are ignored.
 */
export function observationsOf(quads: Iterable<Quad>): Observation[] {
  const bySubject = new Map<string, Map<string, Term>>();
  for (const quad of quads) {
    let properties = bySubject.get(quad.subject.value);
    if (properties === undefined) bySubject.set(quad.subject.value, (properties = new Map()));
    if (!properties.has(quad.predicate.value)) properties.set(quad.predicate.value, quad.object);
  }
  const observations: Observation[] = [];
  for (const [subject, properties] of bySubject) {
    const featureOfInterest = properties.get(terms.hasFeatureOfInterest)?.value;
    const observedProperty = properties.get(terms.observedProperty)?.value;
    if (featureOfInterest === undefined || observedProperty === undefined) continue;
    let result = properties.get(terms.hasSimpleResult);
    let unit: string | undefined;
    if (result === undefined) {
      const node = properties.get(terms.hasResult);
      const quantity = node === undefined ? undefined : bySubject.get(node.value);
      result = quantity?.get(terms.numericValue);
      unit = (quantity?.get(terms.hasUnit) ?? quantity?.get(terms.unit))?.value;
    }
    if (result === undefined) continue;
    observations.push({
      observation: subject,
      featureOfInterest,
      observedProperty,
      value: valueOf(result),
      unit,
      phenomenonTime: timeOf(properties.get(terms.phenomenonTime)),
      resultTime: timeOf(properties.get(terms.resultTime)),
      sensor: properties.get(terms.madeBySensor)?.value,
    });
  }
  return observations;
}

/** A literal's value by its datatype; a lexical form its type does not allow stays a string. */
function valueOf(term: Term): number | string | boolean {
  if (term.termType !== 'Literal') return term.value;
  const lexical = term.value.trim();
  if (numericTypes.has(term.datatype.value)) {
    const number = Number(lexical);
    return lexical !== '' && !Number.isNaN(number) ? number : term.value;
  }
  if (term.datatype.value === XSD_BOOLEAN) {
    if (lexical === 'true' || lexical === '1') return true;
    if (lexical === 'false' || lexical === '0') return false;
  }
  return term.value;
}

function timeOf(term: Term | undefined): Date | undefined {
  if (term?.termType !== 'Literal') return undefined;
  const ms = Date.parse(term.value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
