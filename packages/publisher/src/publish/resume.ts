/** What a new SSE subscriber receives before live elements. */
export type ResumePlan =
  /** No Last-Event-ID: only elements published from now on. */
  | { readonly kind: 'live' }
  /** Every retained element from `fromSeq` on, then live ones. */
  | { readonly kind: 'replay'; readonly fromSeq: number }
  /**
   * Elements after `requestedId` are no longer all retained (`expired`), or the id is newer than
   * anything this log has published, e.g. from before a restart (`unknown`): say so, then replay
   * from the oldest retained element.
   */
  | {
      readonly kind: 'gap';
      readonly requestedId: number;
      readonly fromSeq: number;
      readonly reason: 'expired' | 'unknown';
    };

/** Largest id accepted from a client: anything above cannot be a sequence number we sent. */
const maxEventIdLength = 16;

/**
 * Parses a `Last-Event-ID` header or `lastEventId` query value: `undefined` when absent or empty
 * (the EventSource way of saying "no id"), `null` when it is not a non-negative decimal integer.
 */
export function parseEventId(raw: string | undefined): number | undefined | null {
  if (raw === undefined) return undefined;
  const trimmed = raw.replace(/^[ \t]+|[ \t]+$/g, '');
  if (trimmed === '') return undefined;
  if (trimmed.length > maxEventIdLength || !/^\d+$/.test(trimmed)) return null;
  const id = Number(trimmed);
  return Number.isSafeInteger(id) ? id : null;
}

/** Chooses how to resume a subscriber that last saw `lastEventId`, given what the log retains. */
export function selectResume(
  lastEventId: number | undefined,
  log: { readonly oldestSeq: number | undefined; readonly latestSeq: number },
): ResumePlan {
  if (lastEventId === undefined) return { kind: 'live' };
  const oldest = log.oldestSeq ?? log.latestSeq + 1;
  if (lastEventId > log.latestSeq) {
    return { kind: 'gap', requestedId: lastEventId, fromSeq: oldest, reason: 'unknown' };
  }
  if (lastEventId + 1 < oldest) {
    return { kind: 'gap', requestedId: lastEventId, fromSeq: oldest, reason: 'expired' };
  }
  return { kind: 'replay', fromSeq: lastEventId + 1 };
}

/** The `data:` of a `gap` event: which id was asked for, where delivery goes on, and why. */
export function gapData(requestedId: number, oldestRetained: number, reason: 'expired' | 'unknown'): string {
  return JSON.stringify({ requestedId, oldestRetained, reason });
}
