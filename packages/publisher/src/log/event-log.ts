import type { IdempotencyStamp, LoggedElement } from '../model/stream-element.js';

/** A retained element that an ingest request with an `Idempotency-Key` created. */
export interface StampedElement {
  readonly seq: number;
  readonly graph: string;
  readonly generatedAt: Date;
  readonly idempotency: IdempotencyStamp;
}

/**
 * The ordered, durable history of one stream: the one place an element exists. Every interface
 * reads it — `/latest`, long-poll, SSE catch-up and live broadcast, `/elements/{id}`, history
 * pages — and only what it has made durable is visible to them ("persist, then dispatch").
 *
 * Sequence numbers are dense within one life of the log (its `epoch`) and never reused: a log
 * reopened from the same data directory continues after its last durable element. Retention
 * removes whole pages (`pageElements` consecutive sequence numbers, aligned on multiples of it),
 * so that a page once full never changes again.
 */
export interface EventLog {
  /** Names this life of the log; a new one starts when the log's storage is created afresh. */
  readonly epoch: string;
  /** Elements per page (history page, retention unit), fixed for the log's life. */
  readonly pageElements: number;
  /** The sequence number the next `append` must carry (reserved appends included). */
  readonly nextSeq: number;
  /** Sequence number of the newest durable element, 0 when empty. */
  readonly latestSeq: number;
  /** Sequence number of the oldest retained element, undefined when empty. */
  readonly oldestSeq: number | undefined;
  /** Why appends fail at the moment (a full disk), or undefined while they succeed. */
  readonly appendFailure: LogAppendError | undefined;
  /**
   * Appends `element`, whose `seq` must equal `nextSeq`; resolves once it is durable and visible
   * to readers, in the order of the calls. Rejects with `LogAppendError` if it could not be
   * written: then it and every append made after it are dropped whole, and `nextSeq` is again
   * `latestSeq + 1`.
   */
  append(element: LoggedElement): Promise<void>;
  /** The newest durable element (kept in memory). */
  latest(): LoggedElement | undefined;
  /** A retained element, from the cache or from disk; undefined if not retained. */
  get(seq: number): Promise<LoggedElement | undefined>;
  /** Up to `limit` consecutive retained elements from `fromSeq` (fewer at the end of the log). */
  read(fromSeq: number, limit: number): Promise<LoggedElement[]>;
  /**
   * When the oldest retained element of `page` was generated; undefined when the page holds no
   * retained element. Reads one record and decompresses no document, so that the history root
   * can list every page's time without loading the pages.
   */
  pageStartedAt(page: number): Promise<Date | undefined>;
  /**
   * The stamped elements among the newest `maxElements` retained elements generated at or after
   * `sinceMs`, oldest first: what rebuilds the `Idempotency-Key` index at start-up. Reads at most
   * `maxElements` records, and decompresses none.
   */
  stampedElements(sinceMs: number, maxElements: number): Promise<StampedElement[]>;
  /** Applies the retention policy now (it also runs by itself in the background). */
  applyRetention(nowMs?: number): Promise<void>;
  /** Registers `listener`, called after each batch of elements becomes durable. */
  onAppended(listener: (latestSeq: number) => void): void;
  /**
   * Registers `listener`, called when a new life of the log starts while the process runs (a
   * shared log whose server lost it): `epoch` and every number restart, before `onAppended`
   * announces the first element of the new life. Logs whose epoch cannot change omit it.
   */
  onEpochChanged?(listener: (epoch: string) => void): void;
  close(): Promise<void>;
}

/** An append that could not be made durable (e.g. ENOSPC): nothing of it was kept. */
export class LogAppendError extends Error {
  override readonly name = 'LogAppendError';
  constructor(
    message: string,
    /** The file system's error code, e.g. `ENOSPC`. */
    readonly code: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The log's storage cannot be used at start-up (unwritable, locked, incompatible). */
export class LogOpenError extends Error {
  override readonly name = 'LogOpenError';
}

/** How long a log keeps elements. */
export interface RetentionPolicy {
  /** Keep at least this many newest elements (count); older whole pages are removed. */
  readonly retainedElements: number;
  /** Remove whole pages whose newest element is older than this (seconds); 0: no age limit. */
  readonly retainedSeconds: number;
}

/**
 * An append rendered for a sequence number (or epoch) that another writer of a shared log took
 * first: nothing was kept. The element must be rendered again for `nextSeq` (its IRI carries its
 * number) and appended again; `ElementWriter` does so.
 */
export class LogSeqConflictError extends Error {
  override readonly name = 'LogSeqConflictError';
  constructor(
    /** The log's epoch and newest sequence number when the append was refused. */
    readonly epoch: string,
    readonly latestSeq: number,
  ) {
    super(`sequence number taken: the log is at ${epoch}-${latestSeq}`);
  }
}

/**
 * An ingest append whose `Idempotency-Key` a shared log already holds (another instance, or an
 * earlier life of this one, appended it): nothing was appended; the key's element is named.
 */
export class IdempotencyKeyTakenError extends Error {
  override readonly name = 'IdempotencyKeyTakenError';
  constructor(
    readonly epoch: string,
    readonly seq: number,
    /** When the key's element was generated (ms since the Unix epoch). */
    readonly generatedAtMs: number,
    /** The fingerprint of the body that created the element. */
    readonly fingerprint: string,
  ) {
    super(`Idempotency-Key already used for element ${epoch}-${seq}`);
  }
}
