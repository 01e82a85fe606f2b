/**
 * Element ids as the publisher writes them: `{epoch}-{seq}`, the SSE `id:` and the last segment
 * of an element's IRI (`…/elements/{epoch}-{seq}`). The epoch names one life of the stream's
 * log; the sequence number is dense and increasing within it.
 */
const ELEMENT_ID = /^([a-z0-9]{1,32})-([1-9]\d{0,15})$/;

export interface ElementId {
  readonly epoch: string;
  readonly seq: number;
}

/** Parses an element id; a bare number (older publishers) gives a sequence number with no epoch. */
export function parseElementId(id: string): { readonly epoch: string | undefined; readonly seq: number } | undefined {
  const match = ELEMENT_ID.exec(id);
  if (match !== null) return { epoch: match[1] as string, seq: Number(match[2]) };
  return /^\d{1,16}$/.test(id) ? { epoch: undefined, seq: Number(id) } : undefined;
}

/** The element id at the end of an element IRI, if it follows the publisher's convention. */
export function elementIdOfIri(iri: string): { readonly epoch: string | undefined; readonly seq: number } | undefined {
  const slash = iri.lastIndexOf('/elements/');
  return slash === -1 ? undefined : parseElementId(iri.slice(slash + '/elements/'.length));
}
