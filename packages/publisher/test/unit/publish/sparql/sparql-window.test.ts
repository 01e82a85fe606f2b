import { describe, expect, it } from 'vitest';
import type { PublisherError } from '../../../../src/errors.js';
import { MemoryEventLog } from '../../../../src/log/memory-event-log.js';
import { parseSparqlWindow, readSparqlWindow } from '../../../../src/publish/sparql/sparql-window.js';

const codeOf = (action: () => unknown) => {
  try {
    action();
  } catch (error) {
    return (error as PublisherError).code;
  }
  return undefined;
};

describe('parseSparqlWindow', () => {
  it('is the latest element without a parameter, the last N with elements=N, a duration with duration=', () => {
    expect(parseSparqlWindow(undefined, undefined, 10)).toEqual({ kind: 'latest' });
    expect(parseSparqlWindow('10', undefined, 10)).toEqual({ kind: 'elements', count: 10 });
    expect(parseSparqlWindow(undefined, 'PT5M', 10)).toEqual({ kind: 'duration', durationMs: 300_000, text: 'PT5M' });
  });

  it('refuses more than maxElements by count, a malformed value, and both at once', () => {
    expect(codeOf(() => parseSparqlWindow('11', undefined, 10))).toBe('PUB_ERR_SPARQL_WINDOW_TOO_LARGE');
    for (const [elements, duration] of [['0', undefined], ['1.5', undefined], ['01', undefined], [undefined, 'P1Y'], [undefined, 'PT0S'], ['1', 'PT1S']]) {
      expect(codeOf(() => parseSparqlWindow(elements, duration, 10)), `${elements} ${duration}`).toBe('PUB_ERR_SPARQL_BAD_REQUEST');
    }
  });
});

describe('readSparqlWindow', () => {
  const nowMs = 1_000_000_000;
  /** 200 elements, one a second, the newest generated at `nowMs`. */
  async function log() {
    const memory = new MemoryEventLog(10, { retainedElements: 1_000, retainedSeconds: 0 });
    for (let seq = 1; seq <= 200; seq++) {
      await memory.append({ streamId: 's', epoch: memory.epoch, seq, graph: `urn:g${seq}`, generatedAt: new Date(nowMs - (200 - seq) * 1000), documents: {} as never });
    }
    return memory;
  }
  const seqs = async (window: Parameters<typeof parseSparqlWindow>, maxElements = 150) =>
    (await readSparqlWindow(await log(), parseSparqlWindow(...window), maxElements, nowMs)).map((element) => element.seq);

  it('reads the latest, the last N, or those of the duration, oldest first', async () => {
    expect(await seqs([undefined, undefined, 150])).toEqual([200]);
    expect(await seqs(['3', undefined, 150])).toEqual([198, 199, 200]);
    expect(await seqs([undefined, 'PT2S', 150])).toEqual([198, 199, 200]);
    expect((await seqs([undefined, 'PT99S', 150])).length).toBe(100);
  });

  it('refuses a duration that holds more than maxElements elements, and takes one that holds exactly that many', async () => {
    expect((await seqs([undefined, 'PT149S', 150])).length).toBe(150);
    await expect(seqs([undefined, 'PT150S', 150])).rejects.toMatchObject({ code: 'PUB_ERR_SPARQL_WINDOW_TOO_LARGE' });
  });

  it('is empty for an empty log', async () => {
    const empty = new MemoryEventLog(10, { retainedElements: 10, retainedSeconds: 0 });
    expect(await readSparqlWindow(empty, { kind: 'elements', count: 5 }, 5, nowMs)).toEqual([]);
  });
});
