import { constants } from 'node:fs';
import { type FileHandle, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { FormatName } from '@rdf-stream/protocol';
import type { LoggedElement } from '../model/stream-element.js';
import { type EventLog, LogAppendError, LogOpenError, type RetentionPolicy, type StampedElement } from './event-log.js';
import { LOG_FORMAT_VERSION, type LogMeta, openLogMeta, syncDirectory } from './log-directory.js';
import { oldestRetainedByCount, pageFirstSeq, pageLastSeq, pageOf } from './log-pages.js';
import { decodeRecord, documentsPayload, encodeRecord, RECORD_HEADER_BYTES, type RecordFields, splitPayload } from './log-record.js';
import { finishUpgrade, upgradeLog } from './log-upgrade.js';
import type { Logger } from '../clock-and-logger.js';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

export interface FileEventLogOptions {
  readonly streamId: string;
  /** The stream's log directory (`{dataDir}/streams/{id}`). */
  readonly directory: string;
  readonly formats: readonly FormatName[];
  /** Elements per page and segment file, for a log created now (an existing log keeps its own). */
  readonly pageElements: number;
  readonly retention: RetentionPolicy;
  /** Decoded elements kept in memory for readers (bytes of documents). */
  readonly cacheBytes: number;
  /** Least milliseconds between two syncs; appends made meanwhile share the next one. */
  readonly syncIntervalMs: number;
  /** Bytes of appends waiting for their sync; more are refused (the disk cannot keep up). */
  readonly maxPendingBytes: number;
  /** Milliseconds between two background retention passes (age-based retention needs a clock). */
  readonly retentionIntervalMs: number;
  readonly logger: Logger;
  readonly now?: () => number;
  /**
   * `writer` (default) owns the files. `replica` (a cluster worker) only reads them: it never
   * writes, cuts or removes anything, and `append` records an element the writer made durable.
   */
  readonly role?: 'writer' | 'replica';
}

interface PendingAppend {
  readonly element: LoggedElement;
  readonly record: Promise<Buffer>;
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface TailSegment {
  readonly page: number;
  readonly handle: FileHandle;
  /** Bytes made durable. */
  size: number;
}

const SEGMENT_SUFFIX = '.seg';
/** Bytes read first for a page's first record: most records fit, the rest are read again whole. */
const firstReadBytes = 4096;
/** A first record longer than this (bytes) is taken for damage, not read. */
const maxFirstRecordBytes = 64 * 1024 * 1024;
const segmentName = (page: number) => `${String(page).padStart(12, '0')}${SEGMENT_SUFFIX}`;
const documentBytes = (element: LoggedElement) =>
  Object.values(element.documents).reduce((sum, document) => sum + document.length, 0) + element.graph.length + 64;

/**
 * A stream's durable log: append-only segment files, one per page of `pageElements` elements
 * (`000000000001.seg` holds sequence numbers 1…pageElements), each record length-prefixed and
 * checksummed (see `log-record.ts`). Appends are written in order and made durable by
 * `fdatasync`, one sync for every append that arrived while the previous one ran (group commit).
 * A torn tail found at start-up is cut off. Retention unlinks whole segment files.
 *
 * Memory: the newest element, a bounded cache of decoded elements and the appends waiting for
 * their sync (bounded); never the history itself.
 */
export class FileEventLog implements EventLog {
  readonly epoch: string;
  readonly pageElements: number;
  readonly #options: FileEventLogOptions;
  readonly #formats: readonly FormatName[];
  readonly #cache: LRUCache<number, LoggedElement>;
  readonly #loading = new Map<number, Promise<Map<number, LoggedElement>>>();
  readonly #listeners: Array<(latestSeq: number) => void> = [];
  #pending: PendingAppend[] = [];
  #pendingBytes = 0;
  #flushing: Promise<void> | undefined;
  #tail: TailSegment | undefined;
  #latest: LoggedElement | undefined;
  #latestSeq: number;
  #nextSeq: number;
  /** Oldest page still on disk, undefined while the log is empty. */
  #oldestPage: number | undefined;
  #appendFailure: LogAppendError | undefined;
  #retentionTimer: NodeJS.Timeout | undefined;
  #retaining: Promise<void> | undefined;
  #closed = false;

  private constructor(options: FileEventLogOptions, meta: LogMeta, oldestPage: number | undefined) {
    this.#options = options;
    this.epoch = meta.epoch;
    this.pageElements = meta.pageElements;
    this.#formats = meta.formats as FormatName[];
    this.#latestSeq = 0;
    this.#nextSeq = 1;
    this.#oldestPage = oldestPage;
    this.#cache = new LRUCache<number, LoggedElement>({
      maxSize: Math.max(1, options.cacheBytes),
      sizeCalculation: (element) => Math.max(1, documentBytes(element)),
    });
  }

  /**
   * Opens (or creates) the log in `options.directory`, recovering a torn tail. Throws
   * `LogOpenError` for storage that cannot be used.
   */
  static async open(options: FileEventLogOptions): Promise<FileEventLog> {
    const replica = options.role === 'replica';
    const opened = openLogMeta(options.directory, replica ? undefined : { pageElements: options.pageElements, formats: options.formats });
    const { created } = opened;
    let { meta } = opened;
    const missing = options.formats.filter((format) => !meta.formats.includes(format));
    if (missing.length > 0) throw new LogOpenError(`${options.directory}: the log has no ${missing.join(', ')} documents (written by an older publisher)`);
    if (!replica) {
      if (meta.version < LOG_FORMAT_VERSION) meta = await upgradeLog(options.directory, meta, options.logger);
      else await finishUpgrade(options.directory);
    }
    if (!created && meta.pageElements !== options.pageElements) {
      options.logger.warn(
        { directory: options.directory, pageElements: meta.pageElements, configured: options.pageElements },
        'the log keeps the page size it was created with',
      );
    }
    const pages = await listSegments(options.directory);
    checkContiguous(options.directory, pages);
    const log = new FileEventLog(options, meta, pages[0]);
    await log.#recoverTail(pages);
    if (!replica) {
      log.#retentionTimer = setInterval(() => void log.applyRetention().catch((error: unknown) => {
        options.logger.error({ err: error, directory: options.directory }, 'retention failed');
      }), options.retentionIntervalMs);
      log.#retentionTimer.unref();
    }
    return log;
  }

  get nextSeq(): number {
    return this.#nextSeq;
  }

  get latestSeq(): number {
    return this.#latestSeq;
  }

  get oldestSeq(): number | undefined {
    if (this.#latestSeq === 0 || this.#oldestPage === undefined) return undefined;
    return Math.min(pageFirstSeq(this.#oldestPage, this.pageElements), this.#latestSeq);
  }

  get appendFailure(): LogAppendError | undefined {
    return this.#appendFailure;
  }

  latest(): LoggedElement | undefined {
    return this.#latest;
  }

  onAppended(listener: (latestSeq: number) => void): void {
    this.#listeners.push(listener);
  }

  append(element: LoggedElement): Promise<void> {
    if (this.#closed) return Promise.reject(new LogAppendError('the log is closed', 'ECLOSED'));
    if (this.#options.role === 'replica') return this.#replicate(element);
    if (element.seq !== this.#nextSeq) {
      return Promise.reject(new RangeError(`Expected sequence number ${this.#nextSeq}, got ${element.seq}`));
    }
    const bytes = documentBytes(element);
    if (this.#pendingBytes + bytes > this.#options.maxPendingBytes && this.#pending.length > 0) {
      return Promise.reject(
        new LogAppendError(`${this.#pendingBytes} bytes are already waiting to be written (maxPendingBytes)`, 'EBACKLOG'),
      );
    }
    this.#nextSeq++;
    return new Promise<void>((resolve, reject) => {
      const record = deflate(documentsPayload(element, this.#formats)).then((payload) =>
        encodeRecord({ seq: element.seq, generatedAtMs: element.generatedAt.getTime(), graph: element.graph, idempotency: element.idempotency, payload }),
      );
      // Awaited in the flush; a failure there rejects the append.
      record.catch(() => {});
      this.#pending.push({ element, record, bytes, resolve, reject });
      this.#pendingBytes += bytes;
      this.#startFlush();
    });
  }

  /**
   * Runs the flush loop unless it runs already. An append made after the loop saw its queue
   * empty but before it settled starts the next run from here.
   */
  #startFlush(): void {
    if (this.#flushing !== undefined) return;
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = undefined;
      if (this.#pending.length > 0) this.#startFlush();
    });
  }

  /** A replica learns of an element the writer made durable (possibly after others it missed). */
  #replicate(element: LoggedElement): Promise<void> {
    if (element.seq > this.#latestSeq) {
      this.#advance(element);
      this.#nextSeq = element.seq + 1;
      for (const listener of this.#listeners) listener(this.#latestSeq);
    }
    return Promise.resolve();
  }

  /** `element` is durable: readers see it (the writer's reserved numbers are not touched). */
  #advance(element: LoggedElement): void {
    this.#cache.set(element.seq, element);
    this.#latest = element;
    this.#latestSeq = element.seq;
    this.#oldestPage ??= pageOf(element.seq, this.pageElements);
  }

  async get(seq: number): Promise<LoggedElement | undefined> {
    const oldest = this.oldestSeq;
    if (oldest === undefined || !Number.isSafeInteger(seq) || seq < oldest || seq > this.#latestSeq) return undefined;
    const cached = this.#cache.get(seq);
    if (cached !== undefined) return cached;
    const page = await this.#loadPage(pageOf(seq, this.pageElements));
    return seq < (this.oldestSeq ?? Infinity) ? undefined : page.get(seq);
  }

  async read(fromSeq: number, limit: number): Promise<LoggedElement[]> {
    const elements: LoggedElement[] = [];
    const last = Math.min(this.#latestSeq, fromSeq + limit - 1);
    for (let seq = Math.max(fromSeq, this.oldestSeq ?? Infinity); seq <= last; seq++) {
      const element = await this.get(seq);
      if (element === undefined) break;
      elements.push(element);
    }
    return elements;
  }

  async pageStartedAt(page: number): Promise<Date | undefined> {
    const oldest = this.oldestSeq;
    if (oldest === undefined || page < pageOf(oldest, this.pageElements) || pageFirstSeq(page, this.pageElements) > this.#latestSeq) return undefined;
    const cached = this.#cache.peek(Math.max(oldest, pageFirstSeq(page, this.pageElements)));
    if (cached !== undefined) return cached.generatedAt;
    const fields = await this.#readFirstRecordFields(page);
    return fields === undefined || fields.seq > this.#latestSeq ? undefined : new Date(fields.generatedAtMs);
  }

  async stampedElements(sinceMs: number, maxElements: number): Promise<StampedElement[]> {
    const stamped: StampedElement[] = [];
    const oldest = this.oldestSeq;
    if (oldest === undefined || maxElements <= 0) return stamped;
    let read = 0;
    // Newest page first, each page's records newest first, until old enough or enough read.
    for (let page = pageOf(this.#latestSeq, this.pageElements); page >= pageOf(oldest, this.pageElements); page--) {
      const records = await this.#readRecordFields(page);
      for (let index = records.length - 1; index >= 0; index--) {
        const fields = records[index] as RecordFields;
        if (fields.seq > this.#latestSeq) continue;
        if (fields.generatedAtMs < sinceMs || read >= maxElements) return stamped.reverse();
        read++;
        if (fields.idempotency !== undefined) {
          stamped.push({ seq: fields.seq, graph: fields.graph, generatedAt: new Date(fields.generatedAtMs), idempotency: fields.idempotency });
        }
      }
    }
    return stamped.reverse();
  }

  /** A page's first record as stored (payload left compressed); undefined if it has none. */
  async #readFirstRecordFields(page: number): Promise<RecordFields | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(join(this.#options.directory, segmentName(page)), constants.O_RDONLY);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // removed by retention meanwhile
      throw error;
    }
    try {
      let buffer = Buffer.alloc(firstReadBytes);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      buffer = buffer.subarray(0, bytesRead);
      if (buffer.length >= RECORD_HEADER_BYTES) {
        const recordBytes = RECORD_HEADER_BYTES + buffer.readUInt32LE(0);
        if (recordBytes > buffer.length && recordBytes <= maxFirstRecordBytes) {
          const whole = Buffer.alloc(recordBytes);
          const { bytesRead: wholeRead } = await handle.read(whole, 0, recordBytes, 0);
          buffer = whole.subarray(0, wholeRead);
        }
      }
      const decoded = decodeRecord(buffer, 0);
      return decoded.kind === 'record' ? decoded.fields : undefined;
    } finally {
      await handle.close();
    }
  }

  /** A page's records as stored (checksums verified, payloads left compressed), in order. */
  async #readRecordFields(page: number): Promise<RecordFields[]> {
    let buffer: Buffer;
    try {
      buffer = await readFile(join(this.#options.directory, segmentName(page)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []; // removed by retention meanwhile
      throw error;
    }
    const records: RecordFields[] = [];
    for (let offset = 0; offset < buffer.length; ) {
      const decoded = decodeRecord(buffer, offset);
      if (decoded.kind !== 'record') break;
      records.push(decoded.fields);
      offset += decoded.bytes;
    }
    return records;
  }

  async applyRetention(nowMs: number = (this.#options.now ?? Date.now)()): Promise<void> {
    if (this.#retaining !== undefined) return this.#retaining;
    this.#retaining = this.#retain(nowMs).finally(() => {
      this.#retaining = undefined;
    });
    return this.#retaining;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#retentionTimer);
    while (this.#flushing !== undefined) await this.#flushing;
    await this.#retaining;
    await this.#tail?.handle.close();
    this.#tail = undefined;
  }

  /** Writes every pending append, page by page, each page's part made durable before it is announced. */
  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      let index = 0;
      try {
        const records = await Promise.all(batch.map((append) => append.record));
        while (index < batch.length) {
          const page = pageOf((batch[index] as PendingAppend).element.seq, this.pageElements);
          let end = index;
          while (end < batch.length && pageOf((batch[end] as PendingAppend).element.seq, this.pageElements) === page) end++;
          const tail = await this.#tailFor(page);
          const bytes = Buffer.concat(records.slice(index, end));
          const { bytesWritten } = await tail.handle.write(bytes, 0, bytes.length, tail.size);
          if (bytesWritten !== bytes.length) throw Object.assign(new Error('short write'), { code: 'ENOSPC' });
          tail.size += bytes.length;
          this.#commit(batch.slice(index, end));
          index = end;
        }
        this.#appendFailure = undefined;
      } catch (error) {
        await this.#rollBack(batch.slice(index), error);
      }
      if (this.#options.syncIntervalMs > 0 && this.#pending.length > 0) await delay(this.#options.syncIntervalMs);
    }
  }

  #commit(appends: readonly PendingAppend[]): void {
    for (const append of appends) {
      this.#pendingBytes -= append.bytes;
      this.#advance(append.element);
    }
    for (const append of appends) append.resolve();
    for (const listener of this.#listeners) listener(this.#latestSeq);
  }

  /**
   * Drops `failed` and every append made after them, whole: the segment is cut back to its
   * durable size, and numbering continues after the last durable element.
   */
  async #rollBack(failed: readonly PendingAppend[], cause: unknown): Promise<void> {
    const code = (cause as NodeJS.ErrnoException).code;
    const error = new LogAppendError(`cannot write the log: ${code ?? (cause as Error).message}`, code, { cause });
    this.#appendFailure = error;
    const tail = this.#tail;
    if (tail !== undefined) {
      await tail.handle.truncate(tail.size).catch((truncateError: unknown) => {
        this.#options.logger.error({ err: truncateError }, 'cannot cut the log back after a failed write');
      });
    }
    const dropped = [...failed, ...this.#pending];
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#nextSeq = this.#latestSeq + 1;
    this.#options.logger.error({ code, dropped: dropped.length, directory: this.#options.directory }, 'log append failed');
    for (const append of dropped) append.reject(error);
  }

  /** The open segment of `page`, closing the previous one (synced already) and creating the file. */
  async #tailFor(page: number): Promise<TailSegment> {
    if (this.#tail?.page === page) return this.#tail;
    const previous = this.#tail;
    this.#tail = undefined;
    await previous?.handle.close();
    const path = join(this.#options.directory, segmentName(page));
    // O_DSYNC: each write returns once its data is durable (one trip to the thread pool, not two).
    const handle = await open(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC, 0o644);
    const { size } = await handle.stat();
    syncDirectory(this.#options.directory);
    this.#tail = { page, handle, size };
    if (previous !== undefined) void this.applyRetention();
    return this.#tail;
  }

  /** Start-up: finds the newest durable element, cutting off a torn or garbage tail. */
  async #recoverTail(pages: readonly number[]): Promise<void> {
    for (let index = pages.length - 1; index >= 0; index--) {
      const page = pages[index] as number;
      const path = join(this.#options.directory, segmentName(page));
      const buffer = await readFile(path);
      const { elements, validBytes, problem } = await this.#decodeSegment(page, buffer);
      if (problem !== undefined && this.#options.role !== 'replica') {
        const handle = await open(path, 'r+');
        await handle.truncate(validBytes);
        await handle.datasync();
        await handle.close();
        this.#options.logger.warn(
          { directory: this.#options.directory, segment: segmentName(page), keptBytes: validBytes, cutBytes: buffer.length - validBytes, problem },
          'cut off a torn tail of the log',
        );
      }
      const latest = elements.at(-1);
      if (latest !== undefined) {
        this.#advance(latest);
        this.#nextSeq = latest.seq + 1;
        return;
      }
      if (index > 0) {
        // An empty newest segment (created, nothing durable in it): the previous one must be full.
        continue;
      }
      this.#oldestPage = undefined;
    }
  }

  /** Decodes a segment's records in order, stopping at the first that does not check out. */
  async #decodeSegment(
    page: number,
    buffer: Buffer,
  ): Promise<{ elements: LoggedElement[]; validBytes: number; problem: string | undefined }> {
    const elements: LoggedElement[] = [];
    let offset = 0;
    let expected = pageFirstSeq(page, this.pageElements);
    let problem: string | undefined;
    while (offset < buffer.length) {
      const decoded = decodeRecord(buffer, offset);
      if (decoded.kind === 'truncated') {
        problem = 'record cut short';
        break;
      }
      if (decoded.kind === 'corrupt') {
        problem = decoded.reason;
        break;
      }
      const { fields } = decoded;
      if (fields.seq !== expected || fields.seq > pageLastSeq(page, this.pageElements)) {
        problem = `sequence number ${fields.seq} where ${expected} was expected`;
        break;
      }
      let documents: Record<FormatName, Buffer>;
      try {
        documents = splitPayload(await inflate(fields.payload), this.#formats);
      } catch (error) {
        problem = `payload: ${(error as Error).message}`;
        break;
      }
      elements.push({
        streamId: this.#options.streamId,
        epoch: this.epoch,
        seq: fields.seq,
        graph: fields.graph,
        generatedAt: new Date(fields.generatedAtMs),
        documents: Object.freeze(documents),
        ...(fields.idempotency === undefined ? {} : { idempotency: fields.idempotency }),
      });
      offset += decoded.bytes;
      expected++;
    }
    return { elements, validBytes: offset, problem };
  }

  /** Reads one page from disk into the cache (one read at a time per page). */
  #loadPage(page: number): Promise<Map<number, LoggedElement>> {
    const loading = this.#loading.get(page);
    if (loading !== undefined) return loading;
    const load = (async () => {
      const path = join(this.#options.directory, segmentName(page));
      let buffer: Buffer;
      try {
        buffer = await readFile(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          // Removed by retention (a replica learns of it here: the writer removes the files).
          if (this.#oldestPage !== undefined && page >= this.#oldestPage && page < pageOf(this.#latestSeq, this.pageElements)) {
            this.#oldestPage = page + 1;
          }
          return new Map<number, LoggedElement>();
        }
        throw error;
      }
      const { elements, problem } = await this.#decodeSegment(page, buffer);
      const bySeq = new Map<number, LoggedElement>();
      for (const element of elements) {
        if (element.seq > this.#latestSeq) break;
        bySeq.set(element.seq, element);
        this.#cache.set(element.seq, element);
      }
      const durableEnd = Math.min(this.#latestSeq, pageLastSeq(page, this.pageElements));
      if (problem !== undefined && (elements.at(-1)?.seq ?? 0) < durableEnd) {
        this.#options.logger.error({ directory: this.#options.directory, segment: segmentName(page), problem }, 'damaged log segment');
      }
      return bySeq;
    })().finally(() => this.#loading.delete(page));
    this.#loading.set(page, load);
    return load;
  }

  async #retain(nowMs: number): Promise<void> {
    if (this.#oldestPage === undefined || this.#latestSeq === 0 || this.#options.role === 'replica') return;
    const { retainedElements, retainedSeconds } = this.#options.retention;
    const tailPage = pageOf(this.#latestSeq, this.pageElements);
    let oldestKept = Math.min(tailPage, pageOf(oldestRetainedByCount(this.#latestSeq, retainedElements, this.pageElements), this.pageElements));
    if (retainedSeconds > 0) {
      const cutoffMs = nowMs - retainedSeconds * 1000;
      for (let page = Math.max(this.#oldestPage, oldestKept); page < tailPage; page++) {
        const newest = await this.get(pageLastSeq(page, this.pageElements));
        if (newest === undefined || newest.generatedAt.getTime() >= cutoffMs) break;
        oldestKept = page + 1;
      }
    }
    const removed: number[] = [];
    for (let page = this.#oldestPage; page < oldestKept; page++) removed.push(page);
    if (removed.length === 0) return;
    // Readers stop seeing the pages first, then the files go.
    this.#oldestPage = oldestKept;
    const firstKept = pageFirstSeq(oldestKept, this.pageElements);
    for (const seq of [...this.#cache.keys()]) if (seq < firstKept) this.#cache.delete(seq);
    for (const page of removed) {
      await unlink(join(this.#options.directory, segmentName(page))).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
    }
    syncDirectory(this.#options.directory);
    this.#options.logger.info(
      { directory: this.#options.directory, removedPages: removed.length, oldestSeq: firstKept },
      'retention removed old pages',
    );
  }
}

async function listSegments(directory: string): Promise<number[]> {
  const names = await readdir(directory);
  return names
    .filter((name) => /^\d{12}\.seg$/.test(name))
    .map((name) => Number(name.slice(0, -SEGMENT_SUFFIX.length)))
    .sort((a, b) => a - b);
}

function checkContiguous(directory: string, pages: readonly number[]): void {
  for (let index = 1; index < pages.length; index++) {
    if ((pages[index] as number) !== (pages[index - 1] as number) + 1) {
      throw new LogOpenError(
        `${directory} is damaged: segment ${segmentName(pages[index - 1] as number)} is followed by ${segmentName(pages[index] as number)}`,
      );
    }
  }
}
