/**
 * Updates each client should have received: the elements generated from the start of the
 * measurement (or from the client's first answer, if later) until `graceMs` before the end. A
 * client never answered expected them all. A missed update is one it never got — a failure,
 * not a gap in a chart.
 */
export function countUpdates(
  published: ReadonlyMap<number, number>,
  clients: ReadonlyArray<{ readonly connectedAt: number | undefined; readonly seqs: readonly number[] }>,
  measureFrom: number,
  endedAt: number,
  graceMs: number,
): { expected: number; received: number; missed: number } {
  let expected = 0;
  let received = 0;
  for (const client of clients) {
    const got = new Set(client.seqs);
    const from = Math.max(measureFrom, client.connectedAt ?? measureFrom);
    for (const [seq, generatedAt] of published) {
      if (generatedAt < from || generatedAt > endedAt - graceMs) continue;
      expected++;
      if (got.has(seq)) received++;
    }
  }
  return { expected, received, missed: expected - received };
}
