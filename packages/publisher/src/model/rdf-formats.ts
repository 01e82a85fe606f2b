/** The media type of each RDF format, by the name used in `?format=` and configurations. */
export const rdfMediaTypes = Object.freeze({
  turtle: 'text/turtle',
  trig: 'application/trig',
  ntriples: 'application/n-triples',
  nquads: 'application/n-quads',
  jsonld: 'application/ld+json',
} as const);

/** The RDF formats accepted as input (ingest bodies, MQTT payloads, recordings). */
export type InputFormat = keyof typeof rdfMediaTypes;

/** The formats n3's parser reads. */
export type N3Format = Exclude<InputFormat, 'jsonld'>;
