/** The maximum acceptable latencies (s) for which the study's formula (1) is tabulated. */
export const MAL_SECONDS = [1, 2, 5, 10, 20, 30] as const;

export interface MalAnalysis {
  /** Polling users servable at each MAL: formula (1), maxRequestsPerSecond ≥ users / MAL. */
  readonly table: ReadonlyArray<{ readonly malSeconds: number; readonly maxUsers: number }>;
  /** MAL at which polling serves as many users as the largest SSE run that met its target. */
  readonly cutoffSeconds: number | null;
  readonly advice: string;
}

/**
 * The study's formula (1): a polling user sends one request per MAL, so a server that answers
 * `maxRequestsPerSecond` serves `maxRequestsPerSecond × MAL` users.
 */
export function analyzeMal(maxRequestsPerSecond: number, largestSseClients: number | undefined): MalAnalysis {
  const table = MAL_SECONDS.map((malSeconds) => ({ malSeconds, maxUsers: Math.floor(maxRequestsPerSecond * malSeconds) }));
  if (largestSseClients === undefined || maxRequestsPerSecond <= 0) {
    return { table, cutoffSeconds: null, advice: 'No SSE run met its latency target: no cut-off between polling and push can be given.' };
  }
  const cutoffSeconds = Math.round((largestSseClients / maxRequestsPerSecond) * 100) / 100;
  const advice =
    `At ${Math.round(maxRequestsPerSecond)} requests/s, polling serves the ${largestSseClients} clients that SSE served ` +
    `only if they accept a latency of ${cutoffSeconds} s or more: below that MAL, push with SSE; above it, ` +
    'cacheable polling (which any HTTP cache can scale further) is the simpler choice.';
  return { table, cutoffSeconds, advice };
}
