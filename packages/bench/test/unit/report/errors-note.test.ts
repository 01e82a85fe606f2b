import { describe, expect, it } from 'vitest';
import { answerCause, countError, countFailure, type Fleet } from '../../../src/fleet/polling-client.js';
import { UpdateRecorder } from '../../../src/fleet/update-recorder.js';
import { errorsNote } from '../../../src/report/write-results.js';
import { sumCounts } from '../../../src/analyze/sum-counts.js';

const fleet = (): Fleet => ({ updates: new UpdateRecorder(0, 0), counters: { errors: 0, timeouts: 0, connected: 0 }, errorCauses: new Map(), stopping: false });

describe('the causes of the fleet\'s errors', () => {
  it('names an answer by its status and the code of its problem document, never by free text', () => {
    expect(answerCause(503, '{"type":"about:blank","code":"PUB_ERR_OVERLOADED","title":"Overloaded"}')).toBe('HTTP 503 PUB_ERR_OVERLOADED');
    expect(answerCause(404, '{"code":"stream-not-found"}')).toBe('HTTP 404 stream-not-found');
    expect(answerCause(502)).toBe('HTTP 502');
    expect(answerCause(502, '<html>Bad gateway</html>')).toBe('HTTP 502');
    expect(answerCause(500, '{"code":"a sentence, not a code"}')).toBe('HTTP 500');
    expect(answerCause(500, 'null')).toBe('HTTP 500');
  });

  it('counts each error under its cause, timeouts apart, and nothing once the fleet stops', () => {
    const counted = fleet();
    countFailure(counted, Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    countFailure(counted, Object.assign(new Error('late'), { code: 'ETIMEDOUT' }));
    countFailure(counted, Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    countFailure(counted, new TypeError('no code'));
    countError(counted, answerCause(503, '{"code":"PUB_ERR_OVERLOADED"}'));
    expect(counted.counters).toEqual({ errors: 5, timeouts: 1, connected: 0 });
    expect(Object.fromEntries(counted.errorCauses!)).toEqual({ ECONNRESET: 2, ETIMEDOUT: 1, TypeError: 1, 'HTTP 503 PUB_ERR_OVERLOADED': 1 });
    counted.stopping = true;
    countFailure(counted, Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    expect(counted.counters.errors).toBe(5);
  });

  it('sums the workers\' causes, and the report says them most frequent first', () => {
    const errorCauses = sumCounts([{ ECONNRESET: 1, 'HTTP 503 PUB_ERR_OVERLOADED': 1 }, { ECONNRESET: 3 }, {}]);
    expect(errorCauses).toEqual({ ECONNRESET: 4, 'HTTP 503 PUB_ERR_OVERLOADED': 1 });
    const run = { mode: 'poll', pollStrategy: 'smart-hold', sseEncoding: 'identity', websocketClient: 'lean', proxy: 'none', clients: 8000, errors: 5, timeouts: 0, errorCauses } as const;
    expect(errorsNote(run)).toBe('poll (smart-hold), 8000 clients: 5 errors (0 timeouts): 4 × ECONNRESET, 1 × HTTP 503 PUB_ERR_OVERLOADED.');
  });
});
