import {
  elementId,
  type Gap,
  gapEventData,
  type GapReason,
  parseElementId,
  sseEvents,
  streamGapHeaderValue,
} from '@rdf-stream/protocol';
import { sseFrame } from '../../render/sse-frame.js';

/** What a new SSE subscriber receives before live elements. */
export type ResumePlan =
  /** No Last-Event-ID: only elements published from now on. */
  | { readonly kind: 'live' }
  /** Every retained element from `fromSeq` on, then live ones. */
  | { readonly kind: 'replay'; readonly fromSeq: number }
  /** Say that elements were missed (`gap`), then replay from the oldest retained element. */
  | { readonly kind: 'gap'; readonly requestedId: string; readonly fromSeq: number; readonly reason: GapReason };

/** Longest `Last-Event-ID` accepted: an epoch, a dash and a sequence number. */
const maxEventIdLength = 64;

/** A `Last-Event-ID` as sent: an element id of some life of the log, or a bare number. */
export interface RequestedEventId {
  readonly raw: string;
  /** Undefined for a bare number (an id of no known life: before ids carried their epoch). */
  readonly epoch: string | undefined;
  readonly seq: number;
}

/**
 * Parses a `Last-Event-ID` header or `lastEventId` query value: `undefined` when absent or
 * empty (the EventSource way of saying "no id"), `null` when it is neither an element id
 * (`{epoch}-{seq}`) nor a non-negative decimal integer.
 */
export function parseEventId(raw: string | undefined): RequestedEventId | undefined | null {
  if (raw === undefined) return undefined;
  const trimmed = raw.replace(/^[ \t]+|[ \t]+$/g, '');
  if (trimmed === '') return undefined;
  if (trimmed.length > maxEventIdLength) return null;
  const id = parseElementId(trimmed);
  if (id !== undefined) return { raw: trimmed, ...id };
  if (!/^\d{1,16}$/.test(trimmed)) return null;
  const seq = Number(trimmed);
  return Number.isSafeInteger(seq) ? { raw: trimmed, epoch: undefined, seq } : null;
}

/** What `selectResume` needs to know of the log. */
export interface ResumableLog {
  readonly epoch: string;
  readonly oldestSeq: number | undefined;
  readonly latestSeq: number;
}

/** Chooses how to resume a subscriber that last saw `lastEventId`, given what the log retains. */
export function selectResume(lastEventId: RequestedEventId | undefined, log: ResumableLog): ResumePlan {
  if (lastEventId === undefined) return { kind: 'live' };
  const oldest = log.oldestSeq ?? log.latestSeq + 1;
  const gap = (reason: GapReason): ResumePlan => ({ kind: 'gap', requestedId: lastEventId.raw, fromSeq: oldest, reason });
  if (lastEventId.epoch !== log.epoch) return gap('epoch');
  if (lastEventId.seq > log.latestSeq) return gap('unknown');
  if (lastEventId.seq + 1 < oldest) return gap('expired');
  return { kind: 'replay', fromSeq: lastEventId.seq + 1 };
}

/**
 * The `gap` event (and, in `Stream-Gap`, the same facts as a header): which id was asked for,
 * the id delivery goes on from in the log of `epoch`, and why. The one place the publisher
 * writes a gap; its syntax is the protocol's (`@rdf-stream/protocol`).
 */
export function gapFrame(requestedId: string, epoch: string, oldestRetainedSeq: number, reason: GapReason): string {
  return sseFrame({ event: sseEvents.gap, data: gapData(requestedId, epoch, oldestRetainedSeq, reason) });
}

export function gapData(requestedId: string, epoch: string, oldestRetainedSeq: number, reason: GapReason): string {
  return gapEventData(gapOf(requestedId, epoch, oldestRetainedSeq, reason));
}

export function streamGapHeader(requestedId: string, epoch: string, oldestRetainedSeq: number, reason: GapReason): string {
  return streamGapHeaderValue(gapOf(requestedId, epoch, oldestRetainedSeq, reason));
}

export const gapOf = (requestedId: string, epoch: string, oldestRetainedSeq: number, reason: GapReason): Gap => ({
  requestedId,
  oldestRetained: elementId(epoch, oldestRetainedSeq),
  reason,
});
