import { Pool } from 'undici';

/** One POST of the ingester: its marker, and the element id of its 201 if it was acknowledged. */
export interface IngestAttempt {
  readonly marker: number;
  readonly acknowledgedId: string | undefined;
}

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
 * may or may not have been made durable). Never retries: a retry of an element that was made
 * durable but not acknowledged would be a second element.
 */
export class Ingester {
  readonly attempts: IngestAttempt[] = [];
  readonly #pool: Pool;
  readonly #path: string;
  readonly #token: string;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(baseUrl: string, streamId: string, token: string) {
    this.#pool = new Pool(baseUrl, { connections: 1, headersTimeout: 10_000, bodyTimeout: 10_000 });
    this.#path = `/streams/${streamId}`;
    this.#token = token;
  }

  get acknowledged(): number {
    return this.attempts.filter((attempt) => attempt.acknowledgedId !== undefined).length;
  }

  start(perSecond: number): void {
    this.#running = true;
    this.#loop = this.#paced(perSecond, () => this.#running);
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

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
    await this.#pool.close();
  }

  /** Posts one element after another at `perSecond` (or slower, if the answers take longer) while `more(posted so far)`. */
  async #paced(perSecond: number, more: (posted: number) => boolean, elementOf?: (marker: number) => string): Promise<void> {
    const spacingMs = 1_000 / perSecond;
    let next = performance.now();
    for (let posted = 0; more(posted); posted++) {
      await this.#post(this.attempts.length + 1, elementOf);
      next += spacingMs;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else next = performance.now();
    }
  }

  async #post(marker: number, elementOf: (marker: number) => string = smallElement): Promise<void> {
    let acknowledgedId: string | undefined;
    try {
      const response = await this.#pool.request({
        path: this.#path,
        method: 'POST',
        headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/n-triples' },
        body: elementOf(marker),
      });
      const body = await response.body.text();
      if (response.statusCode === 201) acknowledgedId = (JSON.parse(body) as { id: string }).id;
    } catch {
      // The connection died (the publisher was killed): not acknowledged.
    }
    this.attempts.push({ marker, acknowledgedId });
  }
}
