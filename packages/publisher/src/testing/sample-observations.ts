import { streamResources } from '@rdf-stream/protocol';
import type { Observation } from '../model/observation.js';

/** One observation per value, of facilities `p1`, `p2`… of the parking stream at `streamIri`. */
export const sampleObservations = (streamIri: string, values: readonly number[] = [12, 34]): Observation[] => {
  const minted = streamResources(streamIri);
  return values.map((value, index) => ({
    id: `p${index + 1}`,
    sensor: minted.sensor(`p${index + 1}`),
    observedProperty: 'http://vocab.datex.org/terms#parkingNumberOfVacantSpaces',
    featureOfInterest: minted.featureOfInterest(`p${index + 1}`),
    simpleResult: value,
  }));
};
