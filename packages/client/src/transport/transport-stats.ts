/** Counters a transport keeps while it runs (for "requests per update" and the like). */
export interface TransportStats {
  /** HTTP requests sent (polls, long-polls, SSE connections). */
  requests: number;
  /** Of those, answered 304 Not Modified. */
  notModified: number;
  /** Elements handed over. */
  elements: number;
  /** Connection losses and errors that led to a retry. */
  reconnects: number;
}

export const emptyStats = (): TransportStats => ({ requests: 0, notModified: 0, elements: 0, reconnects: 0 });
