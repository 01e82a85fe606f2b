import type { Quad } from '@rdfjs/types';

const sosa = 'http://www.w3.org/ns/sosa/';
const qudt = 'http://qudt.org/schema/qudt/';
const rdfsLabel = 'http://www.w3.org/2000/01/rdf-schema#label';

/** One SOSA observation of an element, as the page shows it. */
export interface PageObservation {
  readonly featureOfInterest: string;
  readonly observedProperty: string;
  /** A number when the result is numeric, else its lexical form. */
  readonly value: number | string;
  /** A QUDT unit IRI (`sosa:hasResult [ qudt:numericValue …; qudt:hasUnit … ]`). */
  readonly unit: string | undefined;
  /** `sosa:phenomenonTime`, else `sosa:resultTime`, else the element's generation. */
  readonly observedAt: number;
  readonly label: string | undefined;
}

/**
 * The observations of an element's quads (the stream's SOSA profile: `sosa:hasSimpleResult`,
 * or `sosa:hasResult` with a QUDT quantity value). Observations without a feature of interest,
 * a property or a result are skipped.
 */
export function observationsOf(quads: readonly Quad[], generatedAtMs: number): PageObservation[] {
  const bySubject = new Map<string, Map<string, string>>();
  for (const quad of quads) {
    let properties = bySubject.get(quad.subject.value);
    if (properties === undefined) bySubject.set(quad.subject.value, (properties = new Map()));
    if (!properties.has(quad.predicate.value)) properties.set(quad.predicate.value, quad.object.value);
  }
  const observations: PageObservation[] = [];
  for (const [, properties] of bySubject) {
    const featureOfInterest = properties.get(`${sosa}hasFeatureOfInterest`);
    const observedProperty = properties.get(`${sosa}observedProperty`);
    if (featureOfInterest === undefined || observedProperty === undefined) continue;
    let lexical = properties.get(`${sosa}hasSimpleResult`);
    let unit: string | undefined;
    const result = properties.get(`${sosa}hasResult`);
    if (lexical === undefined && result !== undefined) {
      lexical = bySubject.get(result)?.get(`${qudt}numericValue`);
      unit = bySubject.get(result)?.get(`${qudt}hasUnit`) ?? bySubject.get(result)?.get(`${qudt}unit`);
    }
    if (lexical === undefined) continue;
    const numeric = Number(lexical);
    const time = properties.get(`${sosa}phenomenonTime`) ?? properties.get(`${sosa}resultTime`);
    const observedAt = time === undefined ? Number.NaN : Date.parse(time);
    observations.push({
      featureOfInterest,
      observedProperty,
      value: lexical.trim() !== '' && Number.isFinite(numeric) ? numeric : lexical,
      unit,
      observedAt: Number.isNaN(observedAt) ? generatedAtMs : observedAt,
      label: bySubject.get(featureOfInterest)?.get(rdfsLabel),
    });
  }
  return observations;
}
