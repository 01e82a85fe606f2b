import fc from 'fast-check';
import CachePolicy from 'http-cache-semantics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AnswerHeaders, StoredAnswer } from '../../../src/transport/stored-answer.js';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const REQUEST = { url: '/streams/s/latest', method: 'GET', headers: { accept: 'text/turtle' } };
const httpDate = (ms: number) => new Date(ms).toUTCString();

function stored(headers: AnswerHeaders, status = 200, nowMs = NOW): StoredAnswer {
  const answer = new StoredAnswer();
  answer.store(status, headers, nowMs);
  return answer;
}

describe('StoredAnswer', () => {
  it('is fresh for max-age less the Age it came with and the time since, then stale', () => {
    const answer = stored({ 'cache-control': 'public, max-age=10', age: '3', etag: '"e1"' });
    expect(answer.freshForMs(NOW)).toBe(7_000);
    expect(answer.freshForMs(NOW + 6_500)).toBe(500);
    expect(answer.freshForMs(NOW + 7_000)).toBe(0);
    expect(answer.freshForMs(NOW + 60_000)).toBe(0);
    expect(answer.reusable).toBe(true);
    expect(answer.etag).toBe('"e1"');
  });

  it('without max-age: Expires less Date, an invalid Expires is already expired, else 10 % of the time since Last-Modified', () => {
    expect(stored({ date: httpDate(NOW - 2_000), expires: httpDate(NOW + 8_000) }).freshForMs(NOW)).toBe(10_000);
    expect(stored({ date: httpDate(NOW), expires: '0' }).freshForMs(NOW)).toBe(0);
    expect(stored({ date: httpDate(NOW), 'last-modified': httpDate(NOW - 100_000) }).freshForMs(NOW)).toBe(10_000);
    expect(stored({ date: httpDate(NOW), 'last-modified': httpDate(NOW - 100_000) }, 201).freshForMs(NOW)).toBe(0);
    expect(stored({ 'cache-control': 'max-age=5', expires: httpDate(NOW + 60_000) }).freshForMs(NOW)).toBe(5_000);
  });

  it('reads directives case-insensitively and quoted, and a directive given twice with different values as stale (RFC 9111 §4.2.1)', () => {
    expect(stored({ 'cache-control': 'Public, MAX-AGE=4' }).freshForMs(NOW)).toBe(4_000);
    expect(stored({ 'cache-control': 'max-age="4"' }).freshForMs(NOW)).toBe(4_000);
    expect(stored({ 'cache-control': ['max-age=4', 'max-age=4'] }).freshForMs(NOW)).toBe(4_000);
    expect(stored({ 'cache-control': 'max-age=4, max-age=60' }).freshForMs(NOW)).toBe(0);
    expect(stored({ 'cache-control': 'max-age=four' }).freshForMs(NOW)).toBe(0);
  });

  it('no-cache (or Pragma: no-cache without Cache-Control) keeps the answer for revalidation, never fresh; no-store keeps nothing', () => {
    for (const headers of [{ 'cache-control': 'no-cache, max-age=60' }, { pragma: 'no-cache', expires: httpDate(NOW + 60_000) }]) {
      const answer = stored({ ...headers, etag: '"e1"' });
      expect(answer.freshForMs(NOW)).toBe(0);
      expect(answer.reusable).toBe(false);
      expect(answer.etag).toBe('"e1"');
    }
    const noStore = stored({ 'cache-control': 'no-store, max-age=60', etag: '"e1"', 'last-modified': httpDate(NOW) });
    expect([noStore.stored, noStore.etag, noStore.lastModified, noStore.freshForMs(NOW)]).toEqual([false, undefined, undefined, 0]);
    expect(stored({ 'cache-control': 'max-age=60', vary: '*' }).freshForMs(NOW)).toBe(0);
  });

  it('a fresh answer with must-revalidate answers without a request (the directive is about stale answers, RFC 9111 §5.2.2.2)', () => {
    const answer = stored({ 'cache-control': 'max-age=5, must-revalidate' });
    expect(answer.freshForMs(NOW)).toBe(5_000);
    expect(answer.reusable).toBe(true);
  });

  it('stale-while-revalidate and stale-if-error do not make it fresh longer: a poller wants the next element', () => {
    expect(stored({ 'cache-control': 'max-age=2, stale-while-revalidate=30, stale-if-error=60' }).freshForMs(NOW)).toBe(2_000);
  });

  it('a 304 selected by its validator updates the fields it carries, adds those it brings, and is as old as its own Age', () => {
    const answer = stored({ etag: '"e1"', date: httpDate(NOW), age: '30', 'last-modified': httpDate(NOW - 1_000_000) });
    expect(answer.freshForMs(NOW)).toBe(70_000);
    expect(answer.revalidate({ etag: '"e1"', 'cache-control': 'max-age=3' }, NOW + 1_000)).toBe(true);
    expect(answer.freshForMs(NOW + 1_000)).toBe(3_000);
    expect(answer.revalidate({ etag: 'W/"e1"', 'cache-control': 'max-age=9', age: '4' }, NOW + 2_000)).toBe(true);
    expect(answer.freshForMs(NOW + 2_000)).toBe(5_000);
    expect(answer.etag).toBe('W/"e1"');
  });

  it('a 304 whose validator selects nothing updates nothing', () => {
    const answer = stored({ etag: '"e1"', 'cache-control': 'max-age=3' });
    expect(answer.revalidate({ etag: '"e2"', 'cache-control': 'max-age=60' }, NOW)).toBe(false);
    expect(answer.revalidate({ 'cache-control': 'max-age=60' }, NOW)).toBe(false);
    expect(answer.freshForMs(NOW)).toBe(3_000);
    const byDate = stored({ 'last-modified': httpDate(NOW - 5_000), 'cache-control': 'max-age=1' });
    expect(byDate.revalidate({ 'last-modified': httpDate(NOW - 9_000), 'cache-control': 'max-age=60' }, NOW)).toBe(false);
    expect(byDate.revalidate({ 'last-modified': httpDate(NOW - 5_000), 'cache-control': 'max-age=60' }, NOW)).toBe(true);
    expect(byDate.freshForMs(NOW)).toBe(60_000);
    expect(stored({ 'cache-control': 'max-age=1' }).revalidate({ 'cache-control': 'max-age=60' }, NOW)).toBe(true);
  });

  it('forgets what it stored when cleared', () => {
    const answer = stored({ etag: '"e1"', 'cache-control': 'max-age=3' });
    answer.clear();
    expect([answer.stored, answer.etag, answer.freshForMs(NOW), answer.revalidate({ etag: '"e1"' }, NOW)]).toEqual([false, undefined, 0, false]);
  });
});

/**
 * http-cache-semantics, a well-kept general cache, as the reference: on every answer where RFC
 * 9111 leaves no choice (the differences the tests above name are left out of the generated
 * headers), both say the same freshness, reuse and validators.
 */
describe('StoredAnswer against http-cache-semantics', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
  });
  afterEach(() => vi.useRealTimers());

  const seconds = fc.integer({ min: 0, max: 100_000 });
  const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
  const etag = fc.constantFrom('"e1"', 'W/"e1"', '"e2"');
  const cacheControl = fc
    .subarray(['public', 'private', 'no-cache', 'no-store'])
    .chain((flags) => maybe(seconds).map((maxAge) => [...flags, ...(maxAge === undefined ? [] : [`max-age=${maxAge}`])].join(', ')));
  const answerHeaders = fc.record(
    {
      'cache-control': cacheControl,
      date: seconds.map((s) => httpDate(NOW - s * 1000)),
      expires: fc.oneof(fc.integer({ min: -100_000, max: 100_000 }).map((s) => httpDate(NOW + s * 1000)), fc.constant('0')),
      'last-modified': seconds.map((s) => httpDate(NOW - s * 1000)),
      age: seconds.map(String),
      etag,
      pragma: fc.constant('no-cache'),
    },
    { requiredKeys: [] },
  );
  const status = fc.constantFrom(200, 203, 204);
  const later = fc.integer({ min: 0, max: 200_000 });

  function compare(answer: StoredAnswer, policy: CachePolicy) {
    const fresh = answer.freshForMs(Date.now());
    expect(answer.stored).toBe(policy.storable());
    expect(fresh).toBe(policy.stale() ? 0 : policy.timeToLive());
    expect(fresh > 0 && answer.reusable).toBe(policy.satisfiesWithoutRevalidation(REQUEST));
    const validators = policy.revalidationHeaders(REQUEST);
    expect(answer.etag).toBe(validators['if-none-match']);
    if (answer.etag === undefined) expect(answer.lastModified).toBe(validators['if-modified-since']);
  }

  it('agrees on freshness, reuse and validators of a stored answer, now and later', () => {
    fc.assert(
      fc.property(status, answerHeaders, later, (code, headers, afterMs) => {
        vi.setSystemTime(NOW);
        const answer = stored(headers, code);
        const policy = new CachePolicy(REQUEST, { status: code, headers }, { shared: false });
        compare(answer, policy);
        vi.setSystemTime(NOW + afterMs);
        compare(answer, policy);
      }),
      { numRuns: 2_000 },
    );
  });

  it('agrees on which 304 selects the stored answer, and on the revalidated answer', () => {
    const revalidation = fc.record({ 'cache-control': cacheControl, etag, date: seconds.map((s) => httpDate(NOW - s * 1000)), age: seconds.map(String) }, { requiredKeys: [] });
    fc.assert(
      fc.property(answerHeaders, revalidation, later, (headers, notModified, afterMs) => {
        vi.setSystemTime(NOW);
        // http-cache-semantics keeps only the fields the stored answer had, and the stored Age when the 304 has none.
        const kept = Object.fromEntries(Object.entries(notModified).filter(([name]) => name in headers && (name !== 'age' || 'age' in notModified)));
        if ('age' in headers && !('age' in kept)) return;
        const answer = stored(headers);
        const before = new CachePolicy(REQUEST, { status: 200, headers }, { shared: false });
        if (!before.storable()) return;
        vi.setSystemTime(NOW + afterMs);
        const { policy, matches } = before.revalidatedPolicy(REQUEST, { status: 304, headers: kept });
        expect(answer.revalidate(kept, Date.now())).toBe(matches);
        if (matches) compare(answer, policy);
      }),
      { numRuns: 2_000 },
    );
  });
});
