import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { FormatName } from '@rdf-stream/protocol';
import type { Logger } from '../../clock-and-logger.js';
import type { LoggedElement } from '../../model/stream-element.js';
import {
  type EventLog,
  IdempotencyKeyTakenError,
  LogAppendError,
  LogOpenError,
  LogSeqConflictError,
  type RetentionPolicy,
  type StampedElement,
} from '../event-log.js';
import { newEpoch } from '../log-directory.js';
import { oldestRetainedByCount, pageFirstSeq, pageLastSeq, pageOf } from '../log-pages.js';
import { decodeRecord, documentsPayload, encodeRecord, type RecordFields, splitPayload } from '../log-record.js';
import type { RedisConnection } from './redis-connection.js';
import type { StreamKeys } from './redis-keys.js';
import { APPEND_SCRIPT, OPEN_SCRIPT } from './redis-scripts.js';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

export interface RedisEventLogOptions {
  readonly streamId: string;
  /** The base URL the instance mints IRIs under: every instance of a stream must have the same. */
  readonly baseUrl: string;
  readonly keys: StreamKeys;
  /** The instance's command connection (appends, reads), shared by its streams. */
  readonly client: RedisConnection;
  readonly formats: readonly FormatName[];
  /** Elements per page, for a log created now (an existing log keeps its own). */
  readonly pageElements: number;
  readonly retention: RetentionPolicy;
  /** Decoded elements kept in memory for readers (bytes of documents). */
  readonly cacheBytes: number;
  /** Replicas that must have an append on disk besides the server (`WAITAOF`'s numreplicas). */
  readonly waitReplicas: number;
  /** Milliseconds an append may take, `WAITAOF` and the instance's own reading of it included. */
  readonly appendTimeoutMs: number;
  /** Milliseconds one `XREAD BLOCK` waits. */
  readonly readBlockMs: number;
  /** Milliseconds an ingest request's `Idempotency-Key` is kept in the server. */
  readonly idempotencyTtlMs: number;
  /** Milliseconds between two background retention passes (age-based retention). */
  readonly retentionIntervalMs: number;
  /**
   * The fencing token the stream's appends carry: the source lease's while this instance holds
   * it (undefined: it does not, and appends are refused before they reach the server). Absent
   * for an ingest stream, which any instance appends to.
   */
  readonly fencingToken?: () => string | undefined;
  readonly logger: Logger;
  readonly now?: () => number;
}

/** Entries read at once by the follower (count). */
const READ_BATCH = 256;
/** Most pause between two attempts of the follower after an error (milliseconds). */
const MAX_FOLLOW_BACKOFF_MS = 1_000;

const documentBytes = (element: LoggedElement) =>
  Object.values(element.documents).reduce((sum, document) => sum + document.length, 0) + element.graph.length + 64;

const entryId = (seq: number) => `${seq}-0`;
const seqOfId = (id: Buffer | string) => Number(String(id).split('-', 1)[0]);

type Entry = [id: Buffer, fields: Buffer[]];

/**
 * A stream's log in Redis or Valkey Streams, shared by every publisher instance that names the
 * same server: the elements are one stream entry each (id `<seq>-0`, field `r`: the same record
 * as a segment file's), and a meta hash holds the epoch and the newest sequence number.
 *
 * - **Append**: one script (`APPEND_SCRIPT`) checks the fencing token, the idempotency key and the
 *   expected number, and adds the entry; then one `WAITAOF` (shared by every append sent before
 *   it: group commit) confirms it is on disk, and the append resolves once this instance's
 *   follower has read it. Elements carry their number in their bytes (their IRI), so an append
 *   rendered for a number another instance took first is refused (`LogSeqConflictError`) and
 *   rendered again by the writer: optimistic concurrency, which costs a second rendering only
 *   when two instances ingest into one stream at the same instant.
 * - **Read**: one dedicated connection per log follows the stream with a finite `XREAD BLOCK`
 *   from the last number read, and announces each batch (`onAppended`): every instance's
 *   subscribers, `/latest` and history read the elements from there, whoever appended them.
 * - **Faults**: while the server is unreachable, appends fail at once (`appendFailure`), readers
 *   keep what they have, and the follower resumes from its last number. A server that comes back
 *   without this log (restarted empty) or without elements already read gets a new epoch:
 *   `onEpochChanged` listeners hear of it, and no number is ever used twice within an epoch.
 */
export class RedisEventLog implements EventLog {
  readonly #options: RedisEventLogOptions;
  readonly #reader: RedisConnection;
  readonly #cache: LRUCache<number, LoggedElement>;
  readonly #listeners: Array<(latestSeq: number) => void> = [];
  readonly #epochListeners: Array<(epoch: string) => void> = [];
  readonly #waiting = new Map<number, Array<() => void>>();
  readonly #pageStarts = new Map<number, Date>();
  readonly #now: () => number;
  #epoch: string;
  #pageElements: number;
  #latestSeq: number;
  #oldestSeq: number | undefined;
  #latest: LoggedElement | undefined;
  /** The number the next append is rendered for: after the newest known and every append in flight. */
  #nextSeq: number;
  /** Appends in flight are sent in call order (their records are compressed concurrently). */
  #sending: Promise<unknown> = Promise.resolve();
  #scriptsSent = 0;
  /** The newest number the server is known to have given (its answers to this instance's appends). */
  #serverSeq = 0;
  #durableThrough = 0;
  #waitAof: Promise<void> | undefined;
  #followFailure: Error | undefined;
  #closed = false;
  #following: Promise<void> | undefined;
  #retentionTimer: NodeJS.Timeout | undefined;

  private constructor(options: RedisEventLogOptions, reader: RedisConnection, opened: { epoch: string; seq: number; pageElements: number }) {
    this.#options = options;
    this.#reader = reader;
    this.#now = options.now ?? Date.now;
    this.#epoch = opened.epoch;
    this.#pageElements = opened.pageElements;
    this.#latestSeq = opened.seq;
    this.#nextSeq = opened.seq + 1;
    this.#cache = new LRUCache<number, LoggedElement>({ maxSize: Math.max(1, options.cacheBytes), sizeCalculation: (element) => Math.max(1, documentBytes(element)) });
  }

  /** Opens (or creates) the stream's log on the server, reads its newest element, and starts following it. */
  static async open(options: RedisEventLogOptions): Promise<RedisEventLog> {
    const opened = await openMeta(options.client, options.keys, options.pageElements, undefined, 0, options.baseUrl);
    if (opened.baseUrl !== options.baseUrl) {
      throw new LogOpenError(
        `stream ${options.streamId}: its shared log was created by instances whose base URL is ${opened.baseUrl}, not ${options.baseUrl}: every instance of a stream must have the same --base-url (the address clients use), or another --redis-key-prefix`,
      );
    }
    const reader = options.client.duplicate();
    reader.on('error', () => {
      // Reported by the follower's loop (and the command connection's listener): a lost
      // connection rejects the blocked read, which is retried from the last number read.
    });
    await reader.connect();
    const log = new RedisEventLog(options, reader, opened);
    try {
      await log.#loadEnds();
    } catch (error) {
      reader.destroy();
      throw error;
    }
    log.#following = log.#follow();
    if (options.retention.retainedSeconds > 0) {
      log.#retentionTimer = setInterval(() => {
        log.applyRetention().catch((error: unknown) => options.logger.warn({ err: error, stream: options.streamId }, 'retention pass failed'));
      }, options.retentionIntervalMs);
      log.#retentionTimer.unref();
    }
    return log;
  }

  get epoch(): string {
    return this.#epoch;
  }

  get pageElements(): number {
    return this.#pageElements;
  }

  get nextSeq(): number {
    return this.#nextSeq;
  }

  get latestSeq(): number {
    return this.#latestSeq;
  }

  get oldestSeq(): number | undefined {
    return this.#oldestSeq;
  }

  get appendFailure(): LogAppendError | undefined {
    if (!this.#options.client.isReady) return new LogAppendError('the shared log server is unreachable', 'REDIS_UNAVAILABLE');
    if (this.#followFailure !== undefined) return new LogAppendError(`the shared log cannot be read: ${this.#followFailure.message}`, 'REDIS_UNAVAILABLE');
    return undefined;
  }

  latest(): LoggedElement | undefined {
    return this.#latest;
  }

  onAppended(listener: (latestSeq: number) => void): void {
    this.#listeners.push(listener);
  }

  /** Registers `listener`, called when the log starts a new epoch under this instance (its server lost it). */
  onEpochChanged(listener: (epoch: string) => void): void {
    this.#epochListeners.push(listener);
  }

  append(element: LoggedElement): Promise<void> {
    if (this.#closed) return Promise.reject(new LogAppendError('the log is closed', 'CLOSED'));
    if (element.seq !== this.#nextSeq || element.epoch !== this.#epoch) {
      return Promise.reject(new LogSeqConflictError(this.#epoch, this.#nextSeq - 1));
    }
    // Refused at once while the server is unreachable; a reader that is reconnecting only delays the append.
    if (!this.#options.client.isReady) return Promise.reject(new LogAppendError('the shared log server is unreachable', 'REDIS_UNAVAILABLE'));
    const token = this.#options.fencingToken?.();
    if (this.#options.fencingToken !== undefined && token === undefined) {
      return Promise.reject(new LogAppendError("this instance does not hold the stream's source lease", 'FENCED'));
    }
    this.#nextSeq++;
    const record = deflate(documentsPayload(element, this.#options.formats)).then((payload) =>
      encodeRecord({ seq: element.seq, generatedAtMs: element.generatedAt.getTime(), graph: element.graph, idempotency: element.idempotency, payload }),
    );
    // One script in flight per log, in call order: element n + 1 is sent once element n's answer
    // is known, so that an element rendered after a refused one (its number is now wrong) is
    // refused here, without a round trip, and rendered again. Instances race only each other.
    const sent = this.#sending.then(async () => {
      const bytes = await record;
      const known = Math.max(this.#serverSeq, this.#latestSeq);
      if (element.epoch !== this.#epoch || element.seq !== known + 1) throw new LogSeqConflictError(this.#epoch, known);
      const index = ++this.#scriptsSent;
      const reply = await this.#appendScript(element, bytes, token ?? '').then(
        (answer) => answer.map(String),
        (error: unknown) => {
          throw new LogAppendError(`the shared log refused the append: ${(error as Error).message}`, 'REDIS_UNAVAILABLE', { cause: error });
        },
      );
      const [status, epoch, seq] = reply;
      if ((status === 'ok' || status === 'conflict') && epoch === this.#epoch) this.#serverSeq = Math.max(this.#serverSeq, Number(seq));
      return { reply, index };
    });
    this.#sending = sent.catch(() => undefined);
    return withTimeout(
      sent.then(({ reply, index }) => this.#settle(element, reply, index)),
      this.#options.appendTimeoutMs,
      () => new LogAppendError(`the shared log did not confirm the append within ${this.#options.appendTimeoutMs} ms`, 'TIMEOUT'),
    ).catch((error: unknown) => {
      // As the file log: a refused append leaves the next number after the newest known.
      this.#nextSeq = Math.max(this.#latestSeq, this.#serverSeq) + 1;
      throw error;
    });
  }

  /**
   * The newest element on the server, read now (not what this instance has followed so far): where
   * a source taken over continues (see `LeasedSource`).
   */
  async readNewest(): Promise<LoggedElement | undefined> {
    const entries = (await this.#options.client.sendCommand(['XREVRANGE', this.#options.keys.log, '+', '-', 'COUNT', '1'])) as Entry[];
    return entries[0] === undefined ? undefined : this.#decode(entries[0], this.#epoch);
  }

  async get(seq: number): Promise<LoggedElement | undefined> {
    if (seq < (this.#oldestSeq ?? Infinity)) return undefined;
    const cached = this.#cache.get(seq);
    if (cached !== undefined) return cached;
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.#latestSeq) return undefined;
    const [element] = await this.read(seq, 1);
    return element?.seq === seq ? element : undefined;
  }

  async read(fromSeq: number, limit: number): Promise<LoggedElement[]> {
    const first = Math.max(fromSeq, this.#oldestSeq ?? Infinity);
    const last = Math.min(this.#latestSeq, first + limit - 1);
    if (last < first) return [];
    const elements: LoggedElement[] = [];
    for (let seq = first; seq <= last; seq++) {
      const cached = this.#cache.get(seq);
      if (cached === undefined) break;
      elements.push(cached);
    }
    if (elements.length === last - first + 1) return elements;
    const epoch = this.#epoch;
    const entries = (await this.#options.client.sendCommand(['XRANGE', this.#options.keys.log, entryId(first + elements.length), entryId(last)])) as Entry[];
    for (const entry of entries) {
      const element = await this.#decode(entry, epoch);
      // A hole (trimmed under the reader): the elements up to it, as the file log's read.
      if (element.seq !== first + elements.length) break;
      this.#cache.set(element.seq, element);
      elements.push(element);
    }
    return elements;
  }

  async pageStartedAt(page: number): Promise<Date | undefined> {
    const known = this.#pageStarts.get(page);
    if (known !== undefined && pageFirstSeq(page, this.#pageElements) >= (this.#oldestSeq ?? Infinity)) return known;
    const firstSeq = Math.max(pageFirstSeq(page, this.#pageElements), this.#oldestSeq ?? Infinity);
    const lastSeq = Math.min(pageLastSeq(page, this.#pageElements), this.#latestSeq);
    if (firstSeq > lastSeq) return undefined;
    const fields = await this.#firstFields(entryId(firstSeq), entryId(lastSeq));
    if (fields === undefined) return undefined;
    const startedAt = new Date(fields.generatedAtMs);
    if (fields.seq === pageFirstSeq(page, this.#pageElements)) this.#pageStarts.set(page, startedAt);
    return startedAt;
  }

  async stampedElements(sinceMs: number, maxElements: number): Promise<StampedElement[]> {
    if (maxElements <= 0 || this.#latestSeq === 0) return [];
    const entries = (await this.#options.client.sendCommand(['XREVRANGE', this.#options.keys.log, '+', '-', 'COUNT', String(maxElements)])) as Entry[];
    const stamped: StampedElement[] = [];
    for (const [, fields] of entries) {
      const decoded = recordFields(fields);
      if (decoded === undefined || decoded.generatedAtMs < sinceMs) break;
      if (decoded.idempotency !== undefined) {
        stamped.push({ seq: decoded.seq, graph: decoded.graph, generatedAt: new Date(decoded.generatedAtMs), idempotency: decoded.idempotency });
      }
    }
    return stamped.reverse();
  }

  /**
   * Age-based retention (the count is kept by the append script): removes the whole pages whose
   * newest element is older than `retainedSeconds`, never the page being written. Any instance
   * may run it; `XTRIM MINID` makes running it twice harmless.
   */
  async applyRetention(nowMs: number = this.#now()): Promise<void> {
    const { retainedSeconds, retainedElements } = this.#options.retention;
    let firstKept = oldestRetainedByCount(this.#latestSeq, retainedElements, this.#pageElements);
    if (retainedSeconds > 0 && this.#oldestSeq !== undefined) {
      const tailPage = pageOf(this.#latestSeq, this.#pageElements);
      for (let page = pageOf(Math.max(this.#oldestSeq, firstKept), this.#pageElements); page < tailPage; page++) {
        const newest = await this.get(pageLastSeq(page, this.#pageElements));
        if (newest !== undefined && newest.generatedAt.getTime() >= nowMs - retainedSeconds * 1000) break;
        firstKept = pageFirstSeq(page + 1, this.#pageElements);
      }
    }
    if (this.#latestSeq > 0 && firstKept > (this.#oldestSeq ?? 1)) {
      await this.#options.client.sendCommand(['XTRIM', this.#options.keys.log, 'MINID', entryId(firstKept)]);
    }
    await this.#loadOldest();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#retentionTimer);
    // A blocked XREAD returns only after its timeout: cut the connection instead.
    this.#reader.destroy();
    await this.#following;
    await this.#sending;
  }

  #appendScript(element: LoggedElement, record: Buffer, token: string): Promise<Buffer[]> {
    const { keys, retention, idempotencyTtlMs } = this.#options;
    const stamp = element.idempotency;
    return this.#options.client.sendCommand([
      'EVAL', APPEND_SCRIPT, '4', keys.meta, keys.log, keys.lease, stamp === undefined ? keys.meta : keys.idempotency(stamp.key),
      element.epoch, String(element.seq), newEpoch(), token, stamp?.fingerprint ?? '', String(idempotencyTtlMs), record,
      String(retention.retainedElements), String(this.#pageElements), String(element.generatedAt.getTime()), this.#options.baseUrl,
    ]) as Promise<Buffer[]>;
  }

  async #settle(element: LoggedElement, reply: readonly string[], index: number): Promise<void> {
    const [status, ...rest] = reply;
    if (status === 'fenced') throw new LogAppendError("this instance no longer holds the stream's source lease", 'FENCED');
    if (status === 'duplicate') {
      const [epoch = '', seq = '0', generatedAtMs = '0', fingerprint = ''] = (rest[0] ?? '').split(' ');
      throw new IdempotencyKeyTakenError(epoch, Number(seq), Number(generatedAtMs), fingerprint);
    }
    if (status === 'conflict') {
      const [epoch = '', seq = '0'] = rest;
      if (epoch !== this.#epoch) this.#wake();
      throw new LogSeqConflictError(epoch, Number(seq));
    }
    if (status !== 'ok') throw new LogAppendError(`unexpected answer of the append script: ${status}`, undefined);
    await this.#durable(index);
    await this.#reached(element.seq);
  }

  /** Resolves once `WAITAOF` confirmed every script up to the `index`-th on disk (one WAITAOF at a time, for all sent before it). */
  async #durable(index: number): Promise<void> {
    while (this.#durableThrough < index) {
      if (this.#waitAof === undefined) {
        const covers = this.#scriptsSent;
        const replicas = this.#options.waitReplicas;
        this.#waitAof = (this.#options.client.sendCommand(['WAITAOF', '1', String(replicas), String(this.#options.appendTimeoutMs)]) as Promise<number[]>)
          .catch((error: unknown) => {
            throw new LogAppendError(`the shared log did not confirm the append on disk: ${(error as Error).message}`, 'REDIS_UNAVAILABLE', { cause: error });
          })
          .then(([local = 0, remote = 0]) => {
            if (local < 1 || remote < replicas) {
              throw new LogAppendError(
                `the append is not confirmed on disk (${local} local, ${remote} of ${replicas} replicas within ${this.#options.appendTimeoutMs} ms)`,
                'NOT_DURABLE',
              );
            }
            this.#durableThrough = Math.max(this.#durableThrough, covers);
          })
          .finally(() => {
            this.#waitAof = undefined;
          });
      }
      await this.#waitAof;
    }
  }

  /** Resolves once the follower has read `seq` (this instance's readers can see it). */
  #reached(seq: number): Promise<void> {
    if (this.#latestSeq >= seq) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(seq);
      if (waiting === undefined) this.#waiting.set(seq, [resolve]);
      else waiting.push(resolve);
    });
  }

  /** Reads the newest and oldest retained elements (at open, and after a new epoch). */
  async #loadEnds(): Promise<void> {
    this.#latest = await this.readNewest();
    if (this.#latest !== undefined) {
      this.#cache.set(this.#latest.seq, this.#latest);
      this.#latestSeq = Math.max(this.#latestSeq, this.#latest.seq);
      this.#nextSeq = Math.max(this.#nextSeq, this.#latestSeq + 1);
    }
    await this.#loadOldest();
  }

  async #loadOldest(): Promise<void> {
    const fields = await this.#firstFields('-', '+');
    this.#oldestSeq = fields?.seq;
  }

  async #firstFields(from: string, to: string): Promise<RecordFields | undefined> {
    const entries = (await this.#options.client.sendCommand(['XRANGE', this.#options.keys.log, from, to, 'COUNT', '1'])) as Entry[];
    const first = entries[0];
    return first === undefined ? undefined : recordFields(first[1]);
  }

  async #decode([id, fields]: Entry, epoch: string): Promise<LoggedElement> {
    const decoded = recordFields(fields);
    if (decoded === undefined || decoded.seq !== seqOfId(id)) throw new Error(`stream ${this.#options.streamId}: entry ${String(id)} holds no valid record`);
    const documents = splitPayload(await inflate(decoded.payload), this.#options.formats);
    return {
      streamId: this.#options.streamId,
      epoch,
      seq: decoded.seq,
      graph: decoded.graph,
      generatedAt: new Date(decoded.generatedAtMs),
      documents,
      ...(decoded.idempotency === undefined ? {} : { idempotency: decoded.idempotency }),
    };
  }

  /** The follower: reads the stream after the newest number read, for as long as the log is open. */
  async #follow(): Promise<void> {
    const { keys, readBlockMs, logger, streamId } = this.#options;
    let failures = 0;
    while (!this.#closed) {
      try {
        if (this.#followFailure !== undefined || failures > 0) await this.#checkEpoch();
        const reply = (await this.#reader.sendCommand([
          'XREAD', 'COUNT', String(READ_BATCH), 'BLOCK', String(readBlockMs), 'STREAMS', keys.log, entryId(this.#latestSeq),
        ])) as Array<[Buffer, Entry[]]> | null;
        if (this.#followFailure !== undefined) logger.info({ stream: streamId, latestSeq: this.#latestSeq }, 'the shared log is read again');
        this.#followFailure = undefined;
        failures = 0;
        if (reply === null) {
          // A quiet stream: check that the server still has this life of the log (cheap).
          await this.#checkEpoch();
          continue;
        }
        await this.#deliver(reply[0]?.[1] ?? []);
      } catch (error) {
        if (this.#closed) break;
        if (this.#followFailure === undefined) logger.warn({ err: error, stream: streamId }, 'the shared log cannot be read; retrying');
        this.#followFailure = error as Error;
        failures++;
        await delay(Math.min(50 * 2 ** Math.min(failures, 6), MAX_FOLLOW_BACKOFF_MS));
      }
    }
  }

  async #deliver(entries: Entry[]): Promise<void> {
    const epoch = this.#epoch;
    let delivered = false;
    for (const entry of entries) {
      const seq = seqOfId(entry[0]);
      if (seq <= this.#latestSeq) continue;
      if (seq !== this.#latestSeq + 1) {
        // Entries this instance never read were trimmed before it read them (it fell behind
        // retention): readers must hear of the hole, which they do as of any trimmed number.
        this.#options.logger.warn({ stream: this.#options.streamId, from: this.#latestSeq + 1, to: seq - 1 }, 'elements removed by retention before this instance read them');
      }
      const element = await this.#decode(entry, epoch);
      if (epoch !== this.#epoch) return;
      this.#cache.set(seq, element);
      this.#latest = element;
      this.#latestSeq = seq;
      if (this.#nextSeq <= seq) this.#nextSeq = seq + 1;
      delivered = true;
    }
    if (!delivered) return;
    this.#oldestSeq = Math.max(this.#oldestSeq ?? 1, oldestRetainedByCount(this.#latestSeq, this.#options.retention.retainedElements, this.#pageElements));
    if (this.#oldestSeq > this.#latestSeq) this.#oldestSeq = this.#latestSeq;
    for (const listener of this.#listeners) listener(this.#latestSeq);
    for (const [seq, resolvers] of this.#waiting) {
      if (seq > this.#latestSeq) continue;
      this.#waiting.delete(seq);
      for (const resolve of resolvers) resolve();
    }
  }

  /** Makes the follower check the epoch now (an append saw another one). */
  #wake(): void {
    this.#checkEpoch().catch(() => undefined);
  }

  /** Starts a new life here when the server's log is not the one this instance has read. */
  async #checkEpoch(): Promise<void> {
    const opened = await openMeta(this.#options.client, this.#options.keys, this.#pageElements, this.#epoch, this.#latestSeq, this.#options.baseUrl);
    if (opened.epoch === this.#epoch) return;
    const previous = this.#epoch;
    this.#epoch = opened.epoch;
    this.#pageElements = opened.pageElements;
    this.#latestSeq = opened.seq;
    this.#serverSeq = opened.seq;
    this.#nextSeq = opened.seq + 1;
    this.#latest = undefined;
    this.#oldestSeq = undefined;
    this.#cache.clear();
    this.#pageStarts.clear();
    // Appends of the lost life wait no longer for numbers that now name other elements: they end by their timeout.
    this.#waiting.clear();
    this.#options.logger.error(
      { stream: this.#options.streamId, previousEpoch: previous, epoch: opened.epoch },
      'the shared log server lost this log: a new epoch starts, and subscribers get an explicit gap',
    );
    await this.#loadEnds();
    for (const listener of this.#epochListeners) listener(opened.epoch);
    if (this.#latestSeq > 0) for (const listener of this.#listeners) listener(this.#latestSeq);
  }
}

async function openMeta(
  client: RedisConnection,
  keys: StreamKeys,
  pageElements: number,
  knownEpoch: string | undefined,
  readSeq: number,
  baseUrl: string,
): Promise<{ epoch: string; seq: number; pageElements: number; baseUrl: string }> {
  const [epoch, seq, page, , createdFor] = ((await client.sendCommand([
    'EVAL', OPEN_SCRIPT, '2', keys.meta, keys.log, newEpoch(), String(pageElements), knownEpoch ?? '', String(readSeq), baseUrl,
  ])) as Buffer[]).map(String);
  return { epoch: epoch ?? '', seq: Number(seq), pageElements: Number(page), baseUrl: createdFor ?? baseUrl };
}

/** The record of an entry's fields (`r`), checksum verified, payload left compressed. */
function recordFields(fields: Buffer[]): RecordFields | undefined {
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (String(fields[index]) !== 'r') continue;
    const decoded = decodeRecord(fields[index + 1] as Buffer, 0);
    return decoded.kind === 'record' ? decoded.fields : undefined;
  }
  return undefined;
}

/** `work`, or `timeoutError()` if it has not settled within `timeoutMs`. */
function withTimeout<T>(work: Promise<T>, timeoutMs: number, timeoutError: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(timeoutError()), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
