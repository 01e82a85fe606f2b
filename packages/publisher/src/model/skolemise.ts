import type { Quad, Quad_Object, Quad_Subject } from '@rdfjs/types';
import { DataFactory } from 'n3';

const { namedNode, quad } = DataFactory;

/**
 * Replaces every blank node of `triples` by a skolem IRI (RDF 1.1 §3.5), `{genidBase}{n}`, n
 * counting the blank nodes in the order they first appear. An element's blank nodes would get
 * new labels every time a client parses it, so a patch (`/patches`) could not name them; their
 * skolem IRIs are the same in `/latest`, the history and every patch. `genidBase` names the
 * element (`{base}/.well-known/genid/{stream}/{epoch}-{seq}/`), so two elements never share one.
 */
export function skolemise(triples: readonly Quad[], genidBase: string): Quad[] {
  const iris = new Map<string, ReturnType<typeof namedNode>>();
  const iriOf = (label: string) => {
    let iri = iris.get(label);
    if (iri === undefined) {
      iri = namedNode(`${genidBase}${iris.size + 1}`);
      iris.set(label, iri);
    }
    return iri;
  };
  return triples.map((q) => {
    if (q.subject.termType !== 'BlankNode' && q.object.termType !== 'BlankNode') return q;
    const subject: Quad_Subject = q.subject.termType === 'BlankNode' ? iriOf(q.subject.value) : q.subject;
    const object: Quad_Object = q.object.termType === 'BlankNode' ? iriOf(q.object.value) : q.object;
    return quad(subject, q.predicate, object, q.graph);
  });
}
