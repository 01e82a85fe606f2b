import type { Quad } from '@rdfjs/types';
import { namespaces, observationTerms as terms } from '@rdf-stream/protocol';

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
    const featureOfInterest = properties.get(terms.hasFeatureOfInterest);
    const observedProperty = properties.get(terms.observedProperty);
    if (featureOfInterest === undefined || observedProperty === undefined) continue;
    let lexical = properties.get(terms.hasSimpleResult);
    let unit: string | undefined;
    const result = properties.get(terms.hasResult);
    if (lexical === undefined && result !== undefined) {
      lexical = bySubject.get(result)?.get(terms.numericValue);
      unit = bySubject.get(result)?.get(terms.hasUnit) ?? bySubject.get(result)?.get(`${namespaces.qudt}unit`);
    }
    if (lexical === undefined) continue;
    const numeric = Number(lexical);
    const time = properties.get(terms.phenomenonTime) ?? properties.get(terms.resultTime);
    const observedAt = time === undefined ? Number.NaN : Date.parse(time);
    observations.push({
      featureOfInterest,
      observedProperty,
      value: lexical.trim() !== '' && Number.isFinite(numeric) ? numeric : lexical,
      unit,
      observedAt: Number.isNaN(observedAt) ? generatedAtMs : observedAt,
      label: bySubject.get(featureOfInterest)?.get(terms.label),
    });
  }
  return observations;
}
