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

/**
 * The description of every resource of `streamIri` (sensor or feature of interest, by
 * `isMintedResource`) that `element` mentions, from the element's own triples, by IRI: its SOSA
 * type (by the role it plays), `rdf-stream:stream` and `rdf-stream:latestElement` (with the
 * element's `prov:generatedAtTime`), the element's triples about it (a label, if the element
 * gives one), and each of its observations in the element — linked by `sosa:madeObservation` or
 * `sosa:isFeatureOfInterestOf` — with their triples and their result nodes' triples.
 * The observations are those the shapes target: subjects of `sosa:madeBySensor` or
 * `sosa:hasFeatureOfInterest`; unlike `extractObservations`, nothing is re-modelled, so the
 * description quotes exactly what the element published.
 */
export function describeMentionedResources(streamIri: string, element: DescribedElement): Map<string, Quad[]> {
  const bySubject = new Map<string, Quad[]>();
  for (const triple of element.triples) {
    const subject = key(triple.subject);
    const triples = bySubject.get(subject);
    if (triples === undefined) bySubject.set(subject, [triple]);
    else triples.push(triple);
  }
  const descriptions = new Map<string, Map<string, Quad>>();
  const add = (iri: string, described: Quad) => {
    let quads = descriptions.get(iri);
    if (quads === undefined) {
      descriptions.set(iri, (quads = new Map()));
      const resource = namedNode(iri);
      const graph = namedNode(element.graph);
      for (const own of [
        quad(resource, namedNode(resourceTerms.stream), namedNode(streamIri)),
        quad(resource, namedNode(resourceTerms.latestElement), graph),
        quad(graph, namedNode(prov.generatedAtTime), dateTimeLiteral(element.generatedAt)),
        ...(bySubject.get(key(resource)) ?? []),
      ]) {
        quads.set(quadKey(own), own);
      }
    }
    quads.set(quadKey(described), described);
  };
  for (const triples of bySubject.values()) {
    for (const role of roles) {
      for (const named of triples) {
        if (named.predicate.value !== role.predicate || named.object.termType !== 'NamedNode') continue;
        const iri = named.object.value;
        if (!isMintedResource(streamIri, iri)) continue;
        const resource = namedNode(iri);
        add(iri, quad(resource, namedNode(rdf.type), namedNode(role.type)));
        add(iri, quad(resource, namedNode(role.inverse), named.subject));
        for (const triple of triples) {
          add(iri, triple);
          if (triple.predicate.value === sosa.hasResult) {
            for (const result of bySubject.get(key(triple.object)) ?? []) add(iri, result);
          }
        }
      }
    }
  }
  // The resource's own triples first, so that Turtle writes it as one block.
  return new Map(
    [...descriptions].map(([iri, quads]) => {
      const all = [...quads.values()];
      return [iri, [...all.filter((q) => q.subject.value === iri), ...all.filter((q) => q.subject.value !== iri)]];
    }),
  );
}

function quadKey(q: Quad): string {
  const object = q.object.termType === 'Literal' ? `"${q.object.value}"@${q.object.language}^^${q.object.datatype.value}` : key(q.object);
  return `${key(q.subject)} ${q.predicate.value} ${object}`;
}
