import type { Observation, StreamUpdate } from '@rdf-stream/client/live';
import { observationTerms as terms } from '@rdf-stream/protocol';

/** One observation of an element, as the page shows it. */
export interface PageObservation extends Observation {
  /** `sosa:phenomenonTime`, else `sosa:resultTime`, else the element's generation (ms). */
  readonly observedAt: number;
  /** The feature of interest's `rdfs:label` in the same element. */
  readonly label: string | undefined;
}

/** An update's observations (`update.observations`), with the time and label the page shows. */
export function pageObservations(update: Pick<StreamUpdate, 'observations' | 'quads'>, generatedAtMs: number): PageObservation[] {
  const observations = update.observations;
  if (observations.length === 0) return [];
  const labels = new Map<string, string>();
  for (const quad of update.quads) {
    if (quad.predicate.value === terms.label && !labels.has(quad.subject.value)) labels.set(quad.subject.value, quad.object.value);
  }
  return observations.map((observation) => ({
    ...observation,
    observedAt: (observation.phenomenonTime ?? observation.resultTime)?.getTime() ?? generatedAtMs,
    label: labels.get(observation.featureOfInterest),
  }));
}
