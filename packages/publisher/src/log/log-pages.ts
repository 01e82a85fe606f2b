/**
 * Page arithmetic shared by the logs and the history: page `n` (from 1) holds sequence numbers
 * `(n - 1) × pageElements + 1` to `n × pageElements`. Pages are the unit of retention and of
 * the LDES history, so that a full page never changes again.
 */
export const pageOf = (seq: number, pageElements: number) => Math.ceil(seq / pageElements);

export const pageFirstSeq = (page: number, pageElements: number) => (page - 1) * pageElements + 1;

export const pageLastSeq = (page: number, pageElements: number) => page * pageElements;

/**
 * The oldest sequence number a log keeps by count: the first of the page holding the
 * `retainedElements`-th newest element, so that at least `retainedElements` are kept and at
 * most `retainedElements + pageElements - 1`.
 */
export function oldestRetainedByCount(latestSeq: number, retainedElements: number, pageElements: number): number {
  const oldestWanted = Math.max(1, latestSeq - retainedElements + 1);
  return pageFirstSeq(pageOf(oldestWanted, pageElements), pageElements);
}
