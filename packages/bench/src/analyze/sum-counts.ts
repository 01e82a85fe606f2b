/** Counts by name (errors by cause, by code), summed over the workers that kept them; names in the order first seen. */
export function sumCounts(counts: ReadonlyArray<Readonly<Record<string, number>>>): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const each of counts) for (const [name, count] of Object.entries(each)) sum[name] = (sum[name] ?? 0) + count;
  return sum;
}
