import type { Observation } from '../model/observation.js';

/** One observation per value, of facilities `p1`, `p2`… of the parking stream at `streamIri`. */
export const sampleObservations = (streamIri: string, values: readonly number[] = [12, 34]): Observation[] =>
  values.map((value, index) => ({
    id: `p${index + 1}`,
    sensor: `${streamIri}/sensors/p${index + 1}`,
    observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
    featureOfInterest: `${streamIri}/facilities/p${index + 1}`,
    simpleResult: value,
  }));
