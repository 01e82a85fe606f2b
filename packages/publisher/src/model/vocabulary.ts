import { namespaces, streamTerms } from '@rdf-stream/protocol';

/**
 * Namespaces of the vocabulary we emit (see ontologies/sosa-profile.ttl): those clients read too
 * are the protocol's (`@rdf-stream/protocol`), the others only the publisher writes.
 */
export const ns = Object.freeze({
  ...namespaces,
  ssn: 'http://www.w3.org/ns/ssn/',
  datex: 'http://vocab.datex.org/terms#',
  unit: 'http://qudt.org/vocab/unit/',
  vocals: 'http://w3id.org/rsp/vocals#',
  formats: 'http://www.w3.org/ns/formats/',
});

export const rdf = {
  type: `${ns.rdf}type`,
} as const;

export const xsd = {
  string: `${ns.xsd}string`,
  integer: `${ns.xsd}integer`,
  decimal: `${ns.xsd}decimal`,
  double: `${ns.xsd}double`,
  boolean: `${ns.xsd}boolean`,
  dateTime: `${ns.xsd}dateTime`,
} as const;

export const sosa = {
  Observation: `${ns.sosa}Observation`,
  madeBySensor: `${ns.sosa}madeBySensor`,
  observedProperty: `${ns.sosa}observedProperty`,
  hasFeatureOfInterest: `${ns.sosa}hasFeatureOfInterest`,
  hasSimpleResult: `${ns.sosa}hasSimpleResult`,
  hasResult: `${ns.sosa}hasResult`,
  resultTime: `${ns.sosa}resultTime`,
  phenomenonTime: `${ns.sosa}phenomenonTime`,
  Sensor: `${ns.sosa}Sensor`,
  FeatureOfInterest: `${ns.sosa}FeatureOfInterest`,
  /** The inverse of `madeBySensor`, from the sensor. */
  madeObservation: `${ns.sosa}madeObservation`,
  /** The inverse of `hasFeatureOfInterest`, from the feature of interest. */
  isFeatureOfInterestOf: `${ns.sosa}isFeatureOfInterestOf`,
} as const;

export const qudt = {
  QuantityValue: `${ns.qudt}QuantityValue`,
  numericValue: `${ns.qudt}numericValue`,
  hasUnit: `${ns.qudt}hasUnit`,
} as const;

/** The element's timestamp, a term of the protocol (`@rdf-stream/protocol`). */
export const prov = {
  generatedAtTime: streamTerms.generatedAtTime,
} as const;

/**
 * Terms of this project's own vocabulary: an element's sequence number in its stream (the
 * history pages' `ldes:sequencePath`, an `xsd:integer`), a term of the protocol.
 */
export const rdfStream = {
  sequenceNumber: streamTerms.sequenceNumber,
  /** From the history's root to its time index. */
  timeIndex: streamTerms.timeIndex,
} as const;

export const datex = {
  parkingNumberOfVacantSpaces: `${ns.datex}parkingNumberOfVacantSpaces`,
} as const;

/** Prefixes written in Turtle and TriG output. */
export const turtlePrefixes: Readonly<Record<string, string>> = Object.freeze({
  sosa: ns.sosa,
  prov: ns.prov,
  xsd: ns.xsd,
  datex: ns.datex,
});

/**
 * An absolute IRI (a scheme, then no whitespace nor `< > " { } | \ ^ \``): what the
 * configuration accepts for IRIs and what a mapping must produce.
 */
export const ABSOLUTE_IRI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`]+$/;
