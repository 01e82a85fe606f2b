import type { Quad } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { streamResources } from '@rdf-stream/protocol';
import { ns, rdf } from '../../model/vocabulary.js';
import { sparqlResultFormatIris } from '../../render/sparql-result-formats.js';
import { windowParameters } from './sparql-window.js';

const { namedNode, literal, quad } = DataFactory;
const sd = (local: string) => namedNode(`http://www.w3.org/ns/sparql-service-description#${local}`);
const a = namedNode(rdf.type);

/** Prefixes of the service description's Turtle and TriG. */
export const serviceDescriptionPrefixes = Object.freeze({
  sd: 'http://www.w3.org/ns/sparql-service-description#',
  void: 'http://rdfs.org/ns/void#',
  dcat: ns.dcat,
  dcterms: ns.dcterms,
  formats: ns.formats,
});

/**
 * The stream's SPARQL endpoint, described (SPARQL 1.1 Service Description, VoID, DCAT): the
 * stream's `void:sparqlEndpoint`, and the `sd:Service` (`{stream}#sparql`) at that endpoint,
 * what it answers in and the dataset it queries. What the endpoint answers to a GET without a
 * query, and part of the stream's descriptor.
 */
export function sparqlServiceQuads(streamIri: string): Quad[] {
  const stream = namedNode(streamIri);
  const endpoint = namedNode(streamResources(streamIri).sparql);
  const service = namedNode(`${streamIri}#sparql`);
  const dataset = namedNode(`${streamIri}#sparql-dataset`);
  const { elements, duration } = windowParameters;
  return [
    quad(stream, namedNode('http://rdfs.org/ns/void#sparqlEndpoint'), endpoint),
    quad(service, a, sd('Service')),
    quad(service, a, namedNode(`${ns.dcat}DataService`)),
    quad(service, sd('endpoint'), endpoint),
    quad(service, namedNode(`${ns.dcat}endpointURL`), endpoint),
    quad(service, namedNode(`${ns.dcat}servesDataset`), stream),
    quad(service, sd('supportedLanguage'), sd('SPARQL11Query')),
    quad(service, sd('feature'), sd('UnionDefaultGraph')),
    ...[...new Set(Object.values(sparqlResultFormatIris))].map((format) => quad(service, sd('resultFormat'), namedNode(format))),
    quad(
      service,
      namedNode(`${ns.dcterms}description`),
      literal(
        `SPARQL 1.1 queries over the latest element, or the last N elements (?${elements}=N), or those of the last duration (?${duration}=PT5M); read-only.`,
        'en',
      ),
    ),
    quad(service, sd('defaultDataset'), dataset),
    quad(dataset, a, sd('Dataset')),
    quad(
      dataset,
      namedNode(`${ns.dcterms}description`),
      literal("Each element of the window is a named graph (its element IRI); the default graph is their union, with each element's prov:generatedAtTime.", 'en'),
    ),
  ];
}
