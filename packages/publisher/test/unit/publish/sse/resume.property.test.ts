/**
 * Fuzz: any `Last-Event-ID` (or `?lastEventId=`) value is parsed without an exception to "none",
 * "invalid" or an id the publisher could have sent; every id the publisher sends parses back to
 * itself; and the resume plan and `gap` frame made from any valid id are sound. Runs FUZZ_RUNS
 * values per property (test/support/fuzz.ts).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { elementId } from '@rdf-stream/protocol';
import { gapFrame, parseEventId, selectResume } from '../../../../src/publish/sse/resume.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, headerValue, trickyString } from '../../../support/fuzz.js';

const epoch = fc.stringMatching(/^[a-z0-9]{1,32}$/);
const seq = fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }));
const sentId = fc.tuple(epoch, seq).map(([e, s]) => elementId(e, s));
/** Ids the publisher sent, bare numbers, their near misses, and noise. */
const lastEventId = fc.oneof(
  sentId,
  fc.tuple(sentId, headerValue(['-', '0', ' ', '\t', 'e', '.', 'A'], 4), fc.nat()).map(([id, noise, at]) => {
    const cut = at % (id.length + 1);
    return `${id.slice(0, cut)}${noise}${id.slice(cut)}`;
  }),
  fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String),
  headerValue(['-', '0', '9', ' ']),
  trickyString(),
);

describe('Last-Event-ID (property)', () => {
  it('any value parses to none, invalid, or a well-formed id of at most 64 characters', () => {
    fc.assert(
      fc.property(lastEventId, (value) => {
        const parsed = parseEventId(value);
        const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '');
        if (parsed === undefined) expect(trimmed).toBe('');
        if (parsed === null || parsed === undefined) return;
        expect(Number.isSafeInteger(parsed.seq) && parsed.seq >= 0).toBe(true);
        expect(parsed.raw).toBe(trimmed);
        expect(parsed.raw.length).toBeLessThanOrEqual(64);
        // A bare number is decimal digits (leading zeros allowed); an element id is exactly what elementId writes.
        expect(parsed.epoch === undefined ? /^\d+$/.test(parsed.raw) && Number(parsed.raw) === parsed.seq : parsed.raw === elementId(parsed.epoch, parsed.seq)).toBe(true);
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('an id the publisher sent parses back to its epoch and sequence number, spaces and tabs around it or not', () => {
    fc.assert(
      fc.property(epoch, seq, fc.constantFrom('', ' ', '\t', '  \t'), (e, s, padding) => {
        expect(parseEventId(`${padding}${elementId(e, s)}${padding}`)).toEqual({ raw: elementId(e, s), epoch: e, seq: s });
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);

  it('the plan for any valid id replays from within the retained range, and its gap frame is one well-formed event', () => {
    const log = fc
      .tuple(epoch, fc.nat({ max: 10_000 }), fc.nat({ max: 10_000 }))
      .map(([e, latestSeq, retained]) => ({ epoch: e, latestSeq, oldestSeq: latestSeq === 0 ? undefined : Math.max(1, latestSeq - retained) }));
    fc.assert(
      fc.property(lastEventId, log, (value, state) => {
        const parsed = parseEventId(value);
        if (parsed === null || parsed === undefined) return;
        const plan = selectResume(parsed, state);
        const oldest = state.oldestSeq ?? state.latestSeq + 1;
        if (plan.kind === 'live') throw new Error('a valid id must not be ignored');
        expect(plan.fromSeq).toBeGreaterThanOrEqual(oldest);
        expect(plan.fromSeq).toBeLessThanOrEqual(state.latestSeq + 1);
        if (plan.kind !== 'gap') return;
        const events: EventSourceMessage[] = [];
        createParser({ onEvent: (event) => events.push(event) }).feed(gapFrame(plan.requestedId, state.epoch, plan.fromSeq, plan.reason));
        expect(events).toHaveLength(1);
        expect(events[0]?.event).toBe('gap');
        expect(JSON.parse(events[0]!.data)).toEqual({ requestedId: parsed.raw, oldestRetained: elementId(state.epoch, plan.fromSeq), reason: plan.reason });
      }),
      { numRuns: FUZZ_RUNS },
    );
  }, FUZZ_TIMEOUT_MS);
});
