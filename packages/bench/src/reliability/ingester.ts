import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { streamPath } from '@rdf-stream/protocol';

/**
 * One POST of the ingester: its marker, its `Idempotency-Key` (when the ingester sends keys),
 * and the element id of its 201 if it was acknowledged.
 */
export interface IngestAttempt {
  readonly marker: number;
  readonly key: string | undefined;
  readonly acknowledgedId: string | undefined;
}

/** What a resent request was answered: the element's id (201) and whether it was a replay. */
export interface ResendAnswer {
  readonly status: number;
  readonly id: string | undefined;
  readonly replayed: boolean;
}

/** Times a resend is tried again after a dead connection, a 409 (first request in progress) or a 503. */
const RESEND_TRIES = 20;
const RESEND_PAUSE_MS = 250;

/** The IRI each ingested element carries, so that it can be found in the log again. */
export const markerIri = (marker: number) => `urn:reliability:ingest:${marker}`;
export const markerOf = (text: string): number | undefined => {
  const match = /urn:reliability:ingest:(\d+)/.exec(text);
  return match === null ? undefined : Number(match[1]);
};

/** One triple that carries the marker: the smallest element. */
const smallElement = (marker: number) => `<${markerIri(marker)}> <http://www.w3.org/2000/01/rdf-schema#label> "element ${marker}" .\n`;

/**
 * Posts one small element after another to an ingest stream, at a steady rate, and keeps what
 * was acknowledged (201) apart from what was not (an error or a dead connection: the element
 * may or may not have been made durable). Never retries by itself. With `idempotencyKeys`, each
 * element carries an `Idempotency-Key` of its own, and `resend` sends it again with the same key
 * and body: the publisher must answer the element it stored (if it did) instead of a second one.
 */
export class Ingester {
  readonly attempts: IngestAttempt[] = [];
  readonly #pool: Pool;
  readonly #path: string;
  readonly #token: string;
  /** Prefix of this ingester's keys: unique to it, so that keys of other runs never collide. */
  readonly #keyPrefix: string | undefined;
  readonly #concurrency: number;
  #markers = 0;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(
    baseUrl: string,
    streamId: string,
    token: string,
    options: {
      readonly idempotencyKeys?: boolean;
      /** Requests in flight at once (connections), each posting `perSecond / concurrency`. */
      readonly concurrency?: number;
    } = {},
  ) {
    this.#concurrency = Math.max(1, options.concurrency ?? 1);
    this.#pool = new Pool(baseUrl, { connections: this.#concurrency, headersTimeout: 10_000, bodyTimeout: 10_000 });
    this.#path = streamPath(streamId);
    this.#token = token;
    this.#keyPrefix = options.idempotencyKeys === true ? randomUUID() : undefined;
  }

  get acknowledged(): number {
    return this.attempts.filter((attempt) => attempt.acknowledgedId !== undefined).length;
  }

  start(perSecond: number): void {
    this.#running = true;
    const loops = Array.from({ length: this.#concurrency }, () => this.#paced(perSecond / this.#concurrency, () => this.#running));
    this.#loop = Promise.all(loops).then(() => undefined);
  }

  /**
   * Posts `count` elements at `perSecond` (or slower, if the answers take longer), each with
   * `body(marker)` as N-Triples; resolves with how many were acknowledged.
   */
  async burst(count: number, perSecond: number, body: (marker: number) => string, onProgress?: (posted: number) => void): Promise<number> {
    await this.#paced(
      perSecond,
      (posted) => {
        if (posted > 0 && posted % 500 === 0) onProgress?.(posted);
        return posted < count;
      },
      body,
    );
    return this.acknowledged;
  }

  /** Stops posting (`close` ends the connections). */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  async close(): Promise<void> {
    await this.stop();
    if (!this.#pool.closed) await this.#pool.close();
  }

  /**
   * Sends `attempt`'s element again with its key (the ingester must send keys), trying again
   * after a dead connection, a 409 or a 503; resolves with the last answer (status 0: no answer).
   */
  async resend(attempt: IngestAttempt, elementOf: (marker: number) => string = smallElement): Promise<ResendAnswer> {
    if (attempt.key === undefined) throw new Error('this ingester sends no Idempotency-Key');
    let answer: ResendAnswer = { status: 0, id: undefined, replayed: false };
    for (let tries = 0; tries < RESEND_TRIES; tries++) {
      answer = await this.#send(attempt.marker, attempt.key, elementOf).catch(() => ({ status: 0, id: undefined, replayed: false }));
      if (answer.status !== 0 && answer.status !== 409 && answer.status !== 503) return answer;
      await new Promise((resolve) => setTimeout(resolve, RESEND_PAUSE_MS));
    }
    return answer;
  }

  /** Posts one element after another at `perSecond` (or slower, if the answers take longer) while `more(posted so far)`. */
  async #paced(perSecond: number, more: (posted: number) => boolean, elementOf?: (marker: number) => string): Promise<void> {
    const spacingMs = 1_000 / perSecond;
    let next = performance.now();
    for (let posted = 0; more(posted); posted++) {
      await this.#post(++this.#markers, elementOf);
      next += spacingMs;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else next = performance.now();
    }
  }

  async #post(marker: number, elementOf: (marker: number) => string = smallElement): Promise<void> {
    const key = this.#keyPrefix === undefined ? undefined : `${this.#keyPrefix}-${marker}`;
    let acknowledgedId: string | undefined;
    try {
      const answer = await this.#send(marker, key, elementOf);
      if (answer.status === 201) acknowledgedId = answer.id;
    } catch {
      // The connection died (the publisher was killed): not acknowledged.
    }
    this.attempts.push({ marker, key, acknowledgedId });
  }

  async #send(marker: number, key: string | undefined, elementOf: (marker: number) => string): Promise<ResendAnswer> {
    const response = await this.#pool.request({
      path: this.#path,
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.#token}`,
        'content-type': 'application/n-triples',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      body: elementOf(marker),
    });
    const body = await response.body.text();
    return {
      status: response.statusCode,
      id: response.statusCode === 201 ? (JSON.parse(body) as { id: string }).id : undefined,
      replayed: response.headers['idempotent-replayed'] === 'true',
    };
  }
}
