import {
  elementId,
  type Gap,
  gapEventData,
  type GapReason,
  parseEventId,
  sseEvents,
  streamGapHeaderValue,
} from '@rdf-stream/protocol';
import { type LogBounds, resumeFrom } from '../../log/follow-log.js';
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
 * empty (the EventSource way of saying "no id"), `null` when it is not an event id of the
 * protocol (`parseEventId`: an element id, or a bare number).
 */
export function parseLastEventId(raw: string | undefined): RequestedEventId | undefined | null {
  if (raw === undefined) return undefined;
  const trimmed = raw.replace(/^[ \t]+|[ \t]+$/g, '');
  if (trimmed === '') return undefined;
  if (trimmed.length > maxEventIdLength) return null;
  const id = parseEventId(trimmed);
  return id === undefined ? null : { raw: trimmed, ...id };
}

/** What `selectResume` needs to know of the log. */
export type ResumableLog = LogBounds;

/**
 * Chooses how to resume a subscriber that last saw `lastEventId`, given what the log retains:
 * the log's one set of resume rules (`resumeFrom`), said in the terms of the protocol.
 */
export function selectResume(lastEventId: RequestedEventId | undefined, log: ResumableLog): ResumePlan {
  if (lastEventId === undefined) return { kind: 'live' };
  const start = resumeFrom(lastEventId, log);
  if ('afterSeq' in start) return { kind: 'replay', fromSeq: start.afterSeq + 1 };
  return { kind: 'gap', requestedId: lastEventId.raw, fromSeq: start.to + 1, reason: start.reason };
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
