import type { Quad, Quad_Object, Quad_Subject } from '@rdfjs/types';
import { DataFactory } from 'n3';
import { resourceTerms, streamResourceSegments } from '@rdf-stream/protocol';
import { dateTimeLiteral } from './observation.js';
import { prov, rdf, sosa } from './vocabulary.js';

const { namedNode, quad } = DataFactory;

/** One element, as the description of the resources it mentions needs it. */
export interface DescribedElement {
  /** The element's IRI, the name of its graph. */
  readonly graph: string;
  readonly generatedAt: Date;
  /** The element's triples, all in one graph (its Turtle or N-Triples document). */
  readonly triples: readonly Quad[];
}

/** The two roles of a resource a stream mints in an observation, by the predicate that names it. */
const roles = [
  { predicate: sosa.madeBySensor, type: sosa.Sensor, inverse: sosa.madeObservation },
  { predicate: sosa.hasFeatureOfInterest, type: sosa.FeatureOfInterest, inverse: sosa.isFeatureOfInterestOf },
] as const;

/**
 * Whether `iri` is one a stream mints for its sensors and features of interest:
 * `{stream}/sensors/{local}` or `{stream}/facilities/{local}`, `local` one path segment without
 * query or fragment (what the publisher's route for them answers).
 */
export function isMintedResource(streamIri: string, iri: string): boolean {
  for (const segment of [streamResourceSegments.sensors, streamResourceSegments.featuresOfInterest]) {
    const prefix = `${streamIri}/${segment}/`;
    if (iri.startsWith(prefix)) return /^[^/?#]+$/.test(iri.slice(prefix.length));
  }
  return false;
}

const key = (term: Quad_Subject | Quad_Object) => `${term.termType}:${term.value}`;

/** What one element says of one resource: the roles it plays and the observations it plays them in. */
interface Mention {
  readonly types: Set<string>;
  /** `{inverse} {observation key}` → the link from the resource to the observation. */
  readonly links: Map<string, Quad>;
  /** The observations, by key, in the order the element has them. */
  readonly observations: Map<string, Quad_Subject>;
}

/**
 * The description of every resource of `streamIri` (sensor or feature of interest, by
 * `isMintedResource`) that `element` mentions, from the element's own triples, by IRI: its SOSA
 * type (by the role it plays), `rdf-stream:stream` and `rdf-stream:latestElement` (with the
 * element's `prov:generatedAtTime`), the element's triples about it (a label, if the element
 * gives one), and each of its observations in the element — linked by `sosa:madeObservation` or
 * `sosa:isFeatureOfInterestOf` — with their triples and their result nodes' triples.
 * The observations are those the shapes target: subjects of `sosa:madeBySensor` or
 * `sosa:hasFeatureOfInterest`; unlike `extractObservations`, nothing is re-modelled, so the
 * description quotes exactly what the element published. Linear in the element's size.
 */
export function describeMentionedResources(streamIri: string, element: DescribedElement): Map<string, Quad[]> {
  const bySubject = new Map<string, Quad[]>();
  const mentions = new Map<string, Mention>();
  for (const triple of element.triples) {
    const subject = key(triple.subject);
    const triples = bySubject.get(subject);
    if (triples === undefined) bySubject.set(subject, [triple]);
    else triples.push(triple);
    const role = roles.find((candidate) => candidate.predicate === triple.predicate.value);
    if (role === undefined || triple.object.termType !== 'NamedNode' || !isMintedResource(streamIri, triple.object.value)) continue;
    const iri = triple.object.value;
    let mention = mentions.get(iri);
    if (mention === undefined) mentions.set(iri, (mention = { types: new Set(), links: new Map(), observations: new Map() }));
    mention.types.add(role.type);
    mention.links.set(`${role.inverse} ${subject}`, quad(triple.object, namedNode(role.inverse), triple.subject));
    mention.observations.set(subject, triple.subject);
  }
  const graph = namedNode(element.graph);
  const generatedAt = quad(graph, namedNode(prov.generatedAtTime), dateTimeLiteral(element.generatedAt));
  const descriptions = new Map<string, Quad[]>();
  for (const [iri, mention] of mentions) {
    const resource = namedNode(iri);
    // The resource's own triples first, so that Turtle writes it as one block.
    const quads: Quad[] = [
      ...[...mention.types].map((type) => quad(resource, namedNode(rdf.type), namedNode(type))),
      quad(resource, namedNode(resourceTerms.stream), namedNode(streamIri)),
      quad(resource, namedNode(resourceTerms.latestElement), graph),
      ...mention.links.values(),
      ...(bySubject.get(key(resource)) ?? []),
      generatedAt,
    ];
    for (const observation of mention.observations.keys()) {
      for (const triple of bySubject.get(observation) ?? []) {
        quads.push(triple);
        if (triple.predicate.value === sosa.hasResult) quads.push(...(bySubject.get(key(triple.object)) ?? []));
      }
    }
    descriptions.set(iri, quads);
  }
  return descriptions;
}
