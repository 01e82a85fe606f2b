import type { GapReason } from '@rdf-stream/protocol';
import type { LoggedElement } from '../model/stream-element.js';
import type { EventLog } from './event-log.js';

/**
 * Sequence numbers a reader of the log will not be given, said instead of skipped. Delivery goes
 * on at `to + 1`. `from..to` are numbers of the log's current epoch and may be empty
 * (`from > to`) when the reader's position was not one of this life of the log at all
 * (`unknown`, `epoch`): then nothing retained is missed, but the reader must know that its
 * position did not count.
 */
export interface LogGap {
  readonly kind: 'gap';
  /** The reasons of the protocol (`gapReasons` of `@rdf-stream/protocol`). */
  readonly reason: GapReason;
  /** First sequence number not delivered (1 when the reader's position meant nothing here). */
  readonly from: number;
  /** Last sequence number not delivered: delivery goes on at `to + 1`. */
  readonly to: number;
}

/** A reader's position as it gave it: an element id of some life of the log, or a bare number. */
export interface LogPosition {
  /** Undefined for a bare number (an id of no known life). */
  readonly epoch: string | undefined;
  /** The last sequence number the reader has. */
  readonly seq: number;
}

/** What the resume rules need to know of the log. */
export interface LogBounds {
  readonly epoch: string;
  readonly oldestSeq: number | undefined;
  readonly latestSeq: number;
}

/**
 * Where a reader that last had `position` goes on: after its position, or after a gap that says
 * why not. The one set of resume rules, in this order: another epoch (or none) → `epoch`; a
 * number past the newest element → `unknown`; a number whose successor retention removed →
 * `expired`. After a gap the reader goes on from the oldest retained element.
 */
export function resumeFrom(position: LogPosition, log: LogBounds): { readonly afterSeq: number } | LogGap {
  const oldest = log.oldestSeq ?? log.latestSeq + 1;
  if (position.epoch !== log.epoch) return { kind: 'gap', reason: 'epoch', from: 1, to: oldest - 1 };
  if (position.seq > log.latestSeq) return { kind: 'gap', reason: 'unknown', from: 1, to: oldest - 1 };
  if (position.seq + 1 < oldest) return { kind: 'gap', reason: 'expired', from: position.seq + 1, to: oldest - 1 };
  return { afterSeq: position.seq };
}

/** What `LogCursor.next` returns: the next elements, dense and in order (none when caught up), or a gap. */
export type LogStep = readonly LoggedElement[] | LogGap;

export const isGap = (step: LogStep): step is LogGap => !Array.isArray(step);

/**
 * A reader's place in one log: every consumer that reads the log in order (the broadcaster, a
 * subscriber's catch-up, the notification channels, the cluster's relay) reads through one, so
 * that each gets every element after its position exactly once, in order, or an explicit gap —
 * never a silent hole.
 *
 * It trusts only what `EventLog` promises and checks the rest: `read` may return fewer elements
 * than asked (the end of the log, an element that cannot be read), elements may disappear under
 * it (retention, a log trimmed by another process), and the log may announce a batch
 * (`onAppended`) only once it is readable. A cursor that falls behind the oldest retained element
 * gets a gap `expired`; one whose next element is missing inside the retained range (damaged, or
 * never relayed to a replica) gets a gap `expired` for that element alone; one whose log started
 * a new epoch gets a gap `epoch`. One cursor per reader and no buffering: a batch is what `read`
 * returned, handed over as it is.
 */
export class LogCursor {
  readonly #log: EventLog;
  #epoch: string;
  #position: number;

  constructor(log: EventLog, afterSeq: number) {
    this.#log = log;
    this.#epoch = log.epoch;
    this.#position = afterSeq;
  }

  /** The sequence number of the last element handed out (or the end of the last gap). */
  get position(): number {
    return this.#position;
  }

  /**
   * Whether every durable element has been handed out: read synchronously, so that a reader can
   * go live in the same turn as it learns it (see `SubscriberRegistry`).
   */
  get caughtUp(): boolean {
    return this.#position >= this.#log.latestSeq && this.#log.epoch === this.#epoch;
  }

  /**
   * Moves the cursor to just after `seq` without reading: a reader that had nobody to give the
   * elements to (nothing is said of them).
   */
  skipTo(seq: number): void {
    this.#position = Math.max(this.#position, seq);
  }

  /**
   * The next element when it is the newest one and is kept in memory (`latest()`), synchronously;
   * undefined otherwise (then call `next`). The fast path of a reader that keeps up.
   */
  nextLatest(): LoggedElement | undefined {
    const latest = this.#log.latest();
    if (latest === undefined || latest.seq !== this.#position + 1 || this.#log.epoch !== this.#epoch) return undefined;
    this.#position = latest.seq;
    return latest;
  }

  /**
   * Up to `limit` (count, ≥ 1) elements after the position, dense and in order; an empty batch
   * when caught up; or a gap. The position moves past what it returns.
   */
  async next(limit: number): Promise<LogStep> {
    const log = this.#log;
    if (log.epoch !== this.#epoch) return this.#newEpoch();
    const seq = this.#position + 1;
    if (seq > log.latestSeq) return [];
    const oldest = log.oldestSeq;
    if (oldest !== undefined && seq < oldest) return this.#gap(seq);
    const elements = await log.read(seq, limit);
    if (log.epoch !== this.#epoch) return this.#newEpoch();
    if (elements[0]?.seq !== seq) return this.#gap(seq);
    // `read` promises consecutive elements; a log trimmed under it may break that: keep the dense prefix.
    let dense = 1;
    while (dense < elements.length && (elements[dense] as LoggedElement).seq === seq + dense) dense++;
    this.#position = seq + dense - 1;
    return dense === elements.length ? elements : elements.slice(0, dense);
  }

  /**
   * `seq` cannot be read: retention removed it (go on from the oldest retained element), or it is
   * missing inside the retained range (go on past it, so that the cursor always progresses).
   * The bounds are read after the failed read: they are what made it fail.
   */
  #gap(seq: number): LogGap {
    const log = this.#log;
    const resumeAt = Math.max(log.oldestSeq ?? log.latestSeq + 1, seq + 1);
    this.#position = resumeAt - 1;
    return { kind: 'gap', reason: 'expired', from: seq, to: resumeAt - 1 };
  }

  /** The log started a new life under the reader: go on from its oldest retained element. */
  #newEpoch(): LogGap {
    const log = this.#log;
    this.#epoch = log.epoch;
    const oldest = log.oldestSeq ?? log.latestSeq + 1;
    this.#position = oldest - 1;
    return { kind: 'gap', reason: 'epoch', from: 1, to: oldest - 1 };
  }
}

/**
 * A cursor on `log` after `afterSeq` (what the reader already has); with a `LogPosition` (an id a
 * client sent), after the resume rules of `resumeFrom`, whose gap, if any, comes first.
 */
export function follow(log: EventLog, after: number | LogPosition): LogCursor {
  if (typeof after === 'number') return new LogCursor(log, after);
  const start = resumeFrom(after, log);
  if (!('kind' in start)) return new LogCursor(log, start.afterSeq);
  return new PendingGapCursor(log, start);
}

/** A cursor whose first step is the gap the resume rules found. */
class PendingGapCursor extends LogCursor {
  #pending: LogGap | undefined;

  constructor(log: EventLog, gap: LogGap) {
    super(log, gap.to);
    this.#pending = gap;
  }

  override get caughtUp(): boolean {
    return this.#pending === undefined && super.caughtUp;
  }

  override nextLatest(): LoggedElement | undefined {
    return this.#pending === undefined ? super.nextLatest() : undefined;
  }

  override next(limit: number): Promise<LogStep> {
    const gap = this.#pending;
    if (gap === undefined) return super.next(limit);
    this.#pending = undefined;
    return Promise.resolve(gap);
  }
}
