import { parseElementId as parseCurrentElementId } from '@rdf-stream/protocol';

/**
 * Parses an element id as a publisher sent it: `{epoch}-{seq}` (`@rdf-stream/protocol`), or a
 * bare number from an older publisher, which gives a sequence number with no epoch.
 */
export function parseElementId(id: string): { readonly epoch: string | undefined; readonly seq: number } | undefined {
  return parseCurrentElementId(id) ?? (/^\d{1,16}$/.test(id) ? { epoch: undefined, seq: Number(id) } : undefined);
}

/** The element id at the end of an element IRI (`…/elements/{epoch}-{seq}`), if it follows the publisher's convention. */
export function elementIdOfIri(iri: string): { readonly epoch: string | undefined; readonly seq: number } | undefined {
  const slash = iri.lastIndexOf('/elements/');
  return slash === -1 ? undefined : parseElementId(iri.slice(slash + '/elements/'.length));
}
