import type { FormatName } from '@rdf-stream/protocol';

/** The RDF formats accepted as input (ingest bodies, MQTT payloads, recordings): those served. */
export type InputFormat = FormatName;

/** The formats n3's parser reads. */
export type N3Format = Exclude<InputFormat, 'jsonld'>;
