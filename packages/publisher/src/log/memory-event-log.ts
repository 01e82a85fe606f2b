import type { LoggedElement } from '../model/stream-element.js';
import type { EventLog, LogAppendError, RetentionPolicy, StampedElement } from './event-log.js';
import { newEpoch } from './log-directory.js';
import { oldestRetainedByCount, pageFirstSeq, pageLastSeq, pageOf } from './log-pages.js';

/**
 * A log kept in memory (`--log memory`: tests and ephemeral demos): a new epoch at every start,
 * and the same retention by whole pages as the file log, so that every interface behaves alike.
 * Holds at most `retainedElements + pageElements - 1` elements.
 */
export class MemoryEventLog implements EventLog {
  readonly epoch: string;
  readonly pageElements: number;
  readonly appendFailure: LogAppendError | undefined = undefined;
  readonly #retention: RetentionPolicy;
  readonly #elements = new Map<number, LoggedElement>();
  readonly #listeners: Array<(latestSeq: number) => void> = [];
  readonly #now: () => number;
  readonly #replica: boolean;
  #latestSeq = 0;
  #oldestSeq: number | undefined;

  constructor(
    pageElements: number,
    retention: RetentionPolicy,
    options: {
      readonly epoch?: string;
      readonly now?: () => number;
      /** A cluster worker's copy: an element may carry any later number (the writer's). */
      readonly replica?: boolean;
    } = {},
  ) {
    if (!Number.isSafeInteger(pageElements) || pageElements < 1) {
      throw new RangeError(`pageElements must be a positive integer, got ${pageElements}`);
    }
    this.pageElements = pageElements;
    this.#retention = retention;
    this.epoch = options.epoch ?? newEpoch();
    this.#now = options.now ?? Date.now;
    this.#replica = options.replica ?? false;
  }

  get nextSeq(): number {
    return this.#latestSeq + 1;
  }

  get latestSeq(): number {
    return this.#latestSeq;
  }

  get oldestSeq(): number | undefined {
    return this.#oldestSeq;
  }

  latest(): LoggedElement | undefined {
    return this.#elements.get(this.#latestSeq);
  }

  onAppended(listener: (latestSeq: number) => void): void {
    this.#listeners.push(listener);
  }

  append(element: LoggedElement): Promise<void> {
    if (this.#replica && element.seq > this.nextSeq) {
      // The writer's numbers: a replica's first element may carry any, and after elements the
      // writer could no longer relay (a gap) it goes on from the next one, holding only what
      // follows, so that what it retains stays dense and its readers get the gap as `expired`.
      this.#elements.clear();
      this.#oldestSeq = undefined;
      this.#latestSeq = element.seq - 1;
    }
    if (element.seq !== this.nextSeq) {
      return Promise.reject(new RangeError(`Expected sequence number ${this.nextSeq}, got ${element.seq}`));
    }
    this.#elements.set(element.seq, element);
    this.#latestSeq = element.seq;
    this.#oldestSeq ??= element.seq;
    this.#retainByCount();
    for (const listener of this.#listeners) listener(this.#latestSeq);
    return Promise.resolve();
  }

  get(seq: number): Promise<LoggedElement | undefined> {
    return Promise.resolve(this.#elements.get(seq));
  }

  read(fromSeq: number, limit: number): Promise<LoggedElement[]> {
    const elements: LoggedElement[] = [];
    const last = Math.min(this.#latestSeq, fromSeq + limit - 1);
    for (let seq = Math.max(fromSeq, this.#oldestSeq ?? Infinity); seq <= last; seq++) {
      const element = this.#elements.get(seq);
      if (element === undefined) break;
      elements.push(element);
    }
    return Promise.resolve(elements);
  }

  pageStartedAt(page: number): Promise<Date | undefined> {
    const firstSeq = Math.max(pageFirstSeq(page, this.pageElements), this.#oldestSeq ?? Infinity);
    return Promise.resolve(firstSeq > pageLastSeq(page, this.pageElements) ? undefined : this.#elements.get(firstSeq)?.generatedAt);
  }

  stampedElements(sinceMs: number, maxElements: number): Promise<StampedElement[]> {
    const stamped: StampedElement[] = [];
    const oldest = this.#oldestSeq ?? Infinity;
    for (let seq = this.#latestSeq, read = 0; seq >= oldest && read < maxElements; seq--, read++) {
      const element = this.#elements.get(seq);
      if (element === undefined || element.generatedAt.getTime() < sinceMs) break;
      if (element.idempotency !== undefined) stamped.push({ seq, graph: element.graph, generatedAt: element.generatedAt, idempotency: element.idempotency });
    }
    return Promise.resolve(stamped.reverse());
  }

  applyRetention(nowMs: number = this.#now()): Promise<void> {
    this.#retainByCount();
    const { retainedSeconds } = this.#retention;
    if (retainedSeconds > 0 && this.#oldestSeq !== undefined) {
      const tailPage = pageOf(this.#latestSeq, this.pageElements);
      for (let page = pageOf(this.#oldestSeq, this.pageElements); page < tailPage; page++) {
        const newest = this.#elements.get(pageLastSeq(page, this.pageElements));
        if (newest === undefined || newest.generatedAt.getTime() >= nowMs - retainedSeconds * 1000) break;
        this.#dropBefore(pageFirstSeq(page + 1, this.pageElements));
      }
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #retainByCount(): void {
    this.#dropBefore(oldestRetainedByCount(this.#latestSeq, this.#retention.retainedElements, this.pageElements));
  }

  #dropBefore(firstKept: number): void {
    if (this.#oldestSeq === undefined || this.#oldestSeq >= firstKept) return;
    for (let seq = this.#oldestSeq; seq < firstKept; seq++) this.#elements.delete(seq);
    this.#oldestSeq = firstKept;
  }
}
