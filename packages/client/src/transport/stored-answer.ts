import { opaqueTag } from '@rdf-stream/protocol';

/** Response headers as Node and `Object.fromEntries(fetch's Headers)` give them. */
export type AnswerHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Statuses a cache may store and give a heuristic freshness without explicit expiration (RFC 9110 §15.1). */
const HEURISTICALLY_CACHEABLE = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);
/** Heuristic freshness: this share of the time since Last-Modified (RFC 9111 §4.2.2; browsers and http-cache-semantics use 10 %). */
const HEURISTIC_SHARE = 0.1;
/** The largest delta-seconds a cache needs to understand (RFC 9111 §1.2.2). */
const MAX_DELTA_SECONDS = 2 ** 31;

/**
 * The one answer a poller keeps of its resource, as an RFC 9111 private cache keeps it, reduced
 * to what a poller asks of it: how long it stays fresh, whether it may answer without a request,
 * and the validators of the next request. A 304 updates it in place (§4.3.4): a poller that
 * revalidates every half second then keeps no new object per answer, where a general cache
 * (http-cache-semantics, which the unit tests compare it with) builds a new policy and copies all
 * headers each time — old-generation garbage for thousands of pollers.
 *
 * Where it differs from http-cache-semantics 4.3.0, it follows RFC 9111 for a client that wants
 * the next update: `stale-while-revalidate` and `stale-if-error` do not extend freshness;
 * `must-revalidate` only concerns stale answers (§5.2.2.2); a 304 adds the fields it carries
 * (§3.2); a 304 without `Age` is as old as itself; directive names are case-insensitive and a
 * directive given twice with different values makes the answer stale (§4.2.1).
 */
export class StoredAnswer {
  // What the freshness and the validators need, parsed: a 304 that repeats a field leaves no new
  // string behind (thousands of pollers keeping each answer's header strings for half a second
  // promote them all to the old generation).
  #status = 0;
  #etag: string | undefined;
  #lastModified: string | undefined;
  #lastModifiedMs = Number.NaN;
  /** Cache-Control: whether present, and its directives (shared with every answer that had the same header). */
  #hasCacheControl = false;
  #directives = NO_DIRECTIVES;
  /** Expires in ms (NaN: invalid, which means expired), when present. */
  #hasExpires = false;
  #expiresMs = Number.NaN;
  #dateMs = Number.NaN;
  #ageSeconds = 0;
  #varyAll = false;
  #pragmaNoCache = false;
  /** When the answer (or the 304 that revalidated it) came, on the client's clock (ms). */
  #receivedAtMs = 0;
  /** Derived once per answer: freshness lifetime (s), whether a fresh answer may be reused, storable. */
  #lifetimeSeconds = 0;
  #reusable = false;
  #storable = false;

  /** Stores a 2xx answer, replacing what was kept. */
  store(status: number, headers: AnswerHeaders, nowMs: number): void {
    this.#status = status;
    this.#etag = field(headers.etag);
    this.#setLastModified(field(headers['last-modified']));
    this.#setCacheControl(field(headers['cache-control']));
    this.#setExpires(field(headers.expires));
    this.#dateMs = httpDate(field(headers.date), lastDate);
    this.#ageSeconds = delta(field(headers.age));
    this.#varyAll = field(headers.vary)?.trim() === '*';
    this.#pragmaNoCache = isNoCachePragma(field(headers.pragma));
    this.#derive(nowMs);
  }

  /**
   * Updates the stored answer with a 304's fields (RFC 9111 §4.3.4). False when the 304's
   * validators select no stored answer: then nothing was updated, and the caller should forget
   * it (and ask without validators).
   */
  revalidate(headers: AnswerHeaders, nowMs: number): boolean {
    const etag = field(headers.etag);
    const lastModified = field(headers['last-modified']);
    if (!this.#storable || !this.#selects(etag, lastModified)) return false;
    if (etag !== undefined && etag !== this.#etag) this.#etag = etag;
    if (lastModified !== undefined && lastModified !== this.#lastModified) this.#setLastModified(lastModified);
    const cacheControl = field(headers['cache-control']);
    if (cacheControl !== undefined) this.#setCacheControl(cacheControl);
    const expires = field(headers.expires);
    if (expires !== undefined) this.#setExpires(expires);
    const date = field(headers.date);
    if (date !== undefined) this.#dateMs = httpDate(date, lastDate);
    this.#ageSeconds = delta(field(headers.age));
    const vary = field(headers.vary);
    if (vary !== undefined) this.#varyAll = vary.trim() === '*';
    const pragma = field(headers.pragma);
    if (pragma !== undefined) this.#pragmaNoCache = isNoCachePragma(pragma);
    this.#derive(nowMs);
    return true;
  }

  /** Forgets the stored answer. */
  clear(): void {
    this.#storable = false;
    this.#lifetimeSeconds = 0;
    this.#reusable = false;
  }

  /** Whether an answer is stored (and its validators go with the next request). */
  get stored(): boolean {
    return this.#storable;
  }

  /** The stored answer's entity tag (for If-None-Match). */
  get etag(): string | undefined {
    return this.#storable ? this.#etag : undefined;
  }

  /** The stored answer's Last-Modified (for If-Modified-Since when there is no entity tag). */
  get lastModified(): string | undefined {
    return this.#storable ? this.#lastModified : undefined;
  }

  /** How much longer the stored answer is fresh at `nowMs` (ms; 0 when stale or none). */
  freshForMs(nowMs: number): number {
    if (!this.#storable) return 0;
    const ageSeconds = this.#ageSeconds + Math.max(0, nowMs - this.#receivedAtMs) / 1000;
    return Math.max(0, Math.round((this.#lifetimeSeconds - ageSeconds) * 1000));
  }

  /** Whether the stored answer, while fresh, may answer a request without one (no `no-cache`). */
  get reusable(): boolean {
    return this.#reusable;
  }

  #setLastModified(value: string | undefined): void {
    this.#lastModified = value;
    this.#lastModifiedMs = httpDate(value, lastLastModified);
  }

  #setExpires(value: string | undefined): void {
    this.#hasExpires = value !== undefined;
    this.#expiresMs = httpDate(value, lastExpires);
  }

  #setCacheControl(header: string | undefined): void {
    this.#hasCacheControl = header !== undefined;
    this.#directives = header === undefined ? NO_DIRECTIVES : cacheDirectives(header);
  }

  #derive(nowMs: number): void {
    this.#receivedAtMs = nowMs;
    const directives = this.#directives;
    const noCache = directives.noCache || (!this.#hasCacheControl && this.#pragmaNoCache);
    const explicit = directives.maxAge !== -1 || this.#hasExpires;
    this.#storable = !directives.noStore && (explicit || directives.public || HEURISTICALLY_CACHEABLE.has(this.#status));
    this.#lifetimeSeconds = !this.#storable || noCache || this.#varyAll ? 0 : this.#lifetime();
    this.#reusable = !noCache;
  }

  /** Freshness lifetime in seconds (RFC 9111 §4.2.1): max-age, else Expires − Date, else the heuristic. */
  #lifetime(): number {
    const { maxAge } = this.#directives;
    if (maxAge !== -1) return Number.isNaN(maxAge) ? 0 : maxAge;
    const dateMs = Number.isNaN(this.#dateMs) ? this.#receivedAtMs : this.#dateMs;
    if (this.#hasExpires) return Number.isNaN(this.#expiresMs) ? 0 : Math.max(0, (this.#expiresMs - dateMs) / 1000);
    const lastModifiedMs = this.#lastModifiedMs;
    if (!Number.isNaN(lastModifiedMs) && HEURISTICALLY_CACHEABLE.has(this.#status) && dateMs > lastModifiedMs) {
      return ((dateMs - lastModifiedMs) / 1000) * HEURISTIC_SHARE;
    }
    return 0;
  }

  /** Whether a 304 with these validators selects the stored answer (RFC 9111 §4.3.4). */
  #selects(etag: string | undefined, lastModified: string | undefined): boolean {
    // One stored answer: a strong or a weak validator selects it when the opaque tags agree.
    if (etag !== undefined) return this.#etag !== undefined && opaqueTag(this.#etag) === opaqueTag(etag);
    if (this.#lastModified !== undefined) return lastModified === this.#lastModified;
    return this.#etag === undefined && lastModified === undefined;
  }
}

/** The Cache-Control directives a poller's cache reads: max-age (−1: none; NaN: invalid or given twice), no-cache, no-store, public. */
interface CacheDirectives {
  readonly maxAge: number;
  readonly noCache: boolean;
  readonly noStore: boolean;
  readonly public: boolean;
}

const NO_DIRECTIVES: CacheDirectives = Object.freeze({ maxAge: -1, noCache: false, noStore: false, public: false });

/**
 * The last header parsed and what it said. Thousands of pollers of one publisher get the same
 * Cache-Control, Date and Expires within a second: one comparison of the string instead of a
 * parse per answer.
 */
let lastCacheControl: { readonly header: string; readonly directives: CacheDirectives } | undefined;
const lastDate: ParsedDate = { value: undefined, ms: Number.NaN };
const lastExpires: ParsedDate = { value: undefined, ms: Number.NaN };
const lastLastModified: ParsedDate = { value: undefined, ms: Number.NaN };

interface ParsedDate {
  value: string | undefined;
  ms: number;
}

/** Reads Cache-Control's directives (RFC 9111 §5.2): names case-insensitive, values maybe quoted. */
function cacheDirectives(header: string): CacheDirectives {
  if (lastCacheControl?.header === header) return lastCacheControl.directives;
  let maxAge = -1;
  let noCache = false;
  let noStore = false;
  let isPublic = false;
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    const name = (equals === -1 ? part : part.slice(0, equals)).trim().toLowerCase();
    if (name === 'no-cache') noCache = true;
    else if (name === 'no-store') noStore = true;
    else if (name === 'public') isPublic = true;
    else if (name === 'max-age') {
      const value = equals === -1 ? '' : unquote(part.slice(equals + 1).trim());
      const seconds = /^\d+$/.test(value) ? Math.min(Number(value), MAX_DELTA_SECONDS) : Number.NaN;
      // Given twice with different values: invalid, so stale (§4.2.1).
      maxAge = maxAge === -1 || maxAge === seconds ? seconds : Number.NaN;
    }
  }
  const directives = Object.freeze({ maxAge, noCache, noStore, public: isPublic });
  lastCacheControl = { header, directives };
  return directives;
}

/** One header's value as a string (a repeated field joined as a list, RFC 9110 §5.3). */
function field(value: string | readonly string[] | undefined): string | undefined {
  return value === undefined ? undefined : typeof value === 'string' ? value : value.join(', ');
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** A delta-seconds field (Age), 0 when absent or invalid. */
function delta(value: string | undefined): number {
  if (value === undefined) return 0;
  const seconds = Number.parseInt(value, 10);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_DELTA_SECONDS) : 0;
}

/** An HTTP-date (RFC 9110 §5.6.7) in ms, NaN when absent or invalid (an invalid Expires means expired); `last` remembers the last one parsed. */
function httpDate(value: string | undefined, last: ParsedDate): number {
  if (value === undefined) return Number.NaN;
  if (last.value !== value) {
    last.value = value;
    last.ms = Date.parse(value);
  }
  return last.ms;
}

/** `Pragma: no-cache`, which counts as `Cache-Control: no-cache` when there is no Cache-Control (RFC 9111 §5.4). */
function isNoCachePragma(value: string | undefined): boolean {
  return value !== undefined && /no-cache/i.test(value);
}
