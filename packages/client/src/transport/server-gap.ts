import { parseEventId, parseGapEventData } from '@rdf-stream/protocol';
import type { GapEvent } from './transport-event.js';

/**
 * The gap the publisher announced (SSE's `gap` event, the WebSocket's `gap` message: the same
 * JSON of `@rdf-stream/protocol`), with the sequence numbers of its `{epoch}-{seq}` ids.
 */
export function serverGap(data: string): GapEvent {
  const gap = parseGapEventData(data);
  const seqOf = (id: string | undefined) => (id === undefined ? undefined : parseEventId(id)?.seq);
  // An id of another life of the log numbers nothing of this one.
  return { type: 'gap', afterSeq: gap.reason === 'epoch' ? undefined : seqOf(gap.requestedId), resumedAtSeq: seqOf(gap.oldestRetained), reason: gap.reason };
}
