import { describe, expect, it } from 'vitest';
import { wireBytesPerUpdate } from '../../../src/analyze/wire-bytes.js';

const bytes = { identity: 5_000, gzip: 500, headers200: 400, response304: 250, sseEvent: 5_600, sseEventGzip: 520, websocketFrame: 5_030 };
const none = { requests: 0, notModified: 0 };

describe('wireBytesPerUpdate', () => {
  it('pushed streams: one event or one frame per update, whatever the requests', () => {
    expect(wireBytesPerUpdate('sse', bytes, none)).toBe(5_600);
    expect(wireBytesPerUpdate('sse', bytes, none, 'gzip')).toBe(520);
    expect(wireBytesPerUpdate('websocket', bytes, none)).toBe(5_030);
  });

  it('polling: a whole 200 per update, plus the 304s answered per 200', () => {
    // 3 000 requests, 1 000 of them 304: half a 304 per 200.
    expect(wireBytesPerUpdate('poll', bytes, { requests: 3_000, notModified: 1_000 })).toBe(5_400 + 125);
    expect(wireBytesPerUpdate('long-poll', bytes, { requests: 1_000, notModified: 0 })).toBe(5_400);
  });

  it('is null when the bytes, or that framing, were not measured', () => {
    expect(wireBytesPerUpdate('poll', null, none)).toBeNull();
    expect(wireBytesPerUpdate('websocket', { ...bytes, websocketFrame: null }, none)).toBeNull();
  });
});
