import type * as LdesClientModule from 'ldes-client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { elementSseFrame } from '../../src/render/sse-frame.js';
import { parseRdf } from '../support/rdf.js';
import { startTestPublisher, type TestPublisher } from '../../src/testing.js';

/**
 * Acceptance: the community LDES client (ldes-client 0.3.0) replicates a stream from its IRI
 * through the history pages, in `ascending` order, and keeps following it.
 */

type LdesClient = typeof LdesClientModule;
type Member = { id: { value: string }; quads: Array<{ equals(other: unknown): boolean }>; timestamp?: string | Date };

let ldes: LdesClient;
beforeAll(async () => {
  // The client's logger reads LOG_LEVEL once, when the module loads: keep its info lines out.
  const previous = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = 'warn';
  try {
    ldes = await import('ldes-client');
  } finally {
    if (previous === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = previous;
  }
});

const startMs = Date.now() - 3_600_000;
async function publish(running: TestPublisher, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const seq = running.hub.log.latestSeq + 1;
    await running.push(undefined, new Date(startMs + seq * 1000));
  }
}

/** The element IRI named by an element's SSE id (`id: {epoch}-{seq}`). */
async function sseElementIri(running: TestPublisher, seq: number): Promise<string> {
  const element = await running.hub.log.get(seq);
  const id = /^id: (.+)$/m.exec(elementSseFrame(element!, 'nquads').toString())?.[1];
  return `${running.hub.definition.iri}/elements/${id}`;
}

async function read(reader: ReadableStreamDefaultReader<Member>, count: number): Promise<Member[]> {
  const members: Member[] = [];
  while (members.length < count) {
    const next = await reader.read();
    if (next.done) break;
    members.push(next.value);
  }
  return members;
}

const handlerCounts = () =>
  Object.fromEntries(
    (['SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection'] as const).map((event) => [event, process.listenerCount(event)]),
  );

describe('ldes-client 0.3.0 against the publisher', () => {
  let running: TestPublisher;
  let stateDir: string;
  let handlersBefore: Record<string, number>;

  beforeAll(async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3', '--retained-elements', '100'] });
    // 3 full pages and an open one holding element 10.
    await publish(running, 10);
  });
  afterAll(() => running.close());

  const clientFor = (polling: boolean, fetchImpl: typeof fetch = fetch) => {
    stateDir = mkdtempSync(join(tmpdir(), 'ldes-client-state-'));
    handlersBefore = handlerCounts();
    return ldes.replicateLDES(
      ldes.intoConfig({ url: running.hub.definition.iri, polling, pollInterval: 50, statePath: stateDir, fetch: fetchImpl }),
      'ascending',
    );
  };

  afterEach(async () => {
    rmSync(stateDir, { recursive: true, force: true });
    // The client registers process handlers while it runs and removes them at close. When the
    // stream ended by itself, its own close() is still under way when ours returns at once
    // (ldes-client 0.3.0 returns from a second close() without waiting for the first), and the
    // handlers go only at its end: wait for them to go, not a moment more.
    const settled = () => JSON.stringify(handlerCounts()) === JSON.stringify(handlersBefore);
    await vi.waitUntil(settled, { timeout: 5_000, interval: 10 }).catch(() => undefined);
    expect(handlerCounts()).toEqual(handlersBefore);
  });

  it('replays every retained element exactly once, in order, named by its IRI, then ends, reading each page once and never the time index', async () => {
    // The root relates to the oldest page only; the time index, relating to all four, is linked by no relation.
    const history = `${running.hub.definition.iri}/history`;
    const root = await parseRdf('nquads', await (await fetch(history, { headers: { accept: 'application/n-quads' } })).text());
    const fromRoot = root.filter((q) => q.subject.value === history && q.predicate.value === 'https://w3id.org/tree#relation');
    expect(fromRoot).toHaveLength(1);
    expect(root.some((q) => q.subject.value === history && q.object.value === `${history}/index`)).toBe(true);
    const requested: string[] = [];
    const recording: typeof fetch = (input, init) => {
      requested.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const client = clientFor(false, recording);
    const reader = client.stream({ highWaterMark: 10 }).getReader() as ReadableStreamDefaultReader<Member>;
    try {
      const members = await read(reader, Number.POSITIVE_INFINITY);
      const expected = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((seq) => sseElementIri(running, seq)));
      expect(members.map((member) => member.id.value)).toEqual(expected);
      const epoch = running.hub.log.epoch;
      const pages = requested.filter((url) => url.startsWith(`${history}/`));
      expect(pages.sort()).toEqual([1, 2, 3, 4].map((n) => `${history}/${epoch}-${n}`));
      expect(members.map((member) => new Date(member.timestamp!).getTime())).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((seq) => startMs + seq * 1000),
      );
      // A member is the element: every quad of its own document.
      const own = await parseRdf('nquads', await (await fetch(expected[4]!, { headers: { accept: 'application/n-quads' } })).text());
      for (const q of own) expect(members[4]!.quads.some((m) => m.equals(q))).toBe(true);
    } finally {
      await reader.cancel();
      await client.close();
    }
  });

  it('follows the stream: new elements arrive after the replay', async () => {
    const client = clientFor(true);
    const reader = client.stream({ highWaterMark: 10 }).getReader() as ReadableStreamDefaultReader<Member>;
    try {
      const replayed = await read(reader, 10);
      expect(replayed.map((member) => member.id.value)).toEqual(
        await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((seq) => sseElementIri(running, seq))),
      );
      // Elements 11 and 12 fill the open page: it closes and links to page 5.
      await publish(running, 2);
      const followed = await read(reader, 2);
      expect(followed.map((member) => member.id.value)).toEqual([await sseElementIri(running, 11), await sseElementIri(running, 12)]);
    } finally {
      await reader.cancel();
      await client.close();
    }
  });
});

describe('ldes-client 0.3.0 with a root from a cache, within the grace period', () => {
  let running: TestPublisher;
  let stateDir: string;
  beforeAll(async () => {
    running = await startTestPublisher({ flags: ['--page-elements', '3', '--retained-elements', '4'] });
  });
  afterAll(async () => {
    await running.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('a root naming an oldest page retention removed since still leads to every retained element, exactly once, in order', async () => {
    await publish(running, 6);
    const rootUrl = `${running.hub.definition.iri}/history`;
    const cached = await (await fetch(rootUrl, { headers: { accept: 'application/n-quads' } })).text();
    const named = (await parseRdf('nquads', cached)).filter((q) => q.predicate.value === 'https://w3id.org/tree#node').map((q) => q.object.value);
    expect(named).toEqual([`${rootUrl}/${running.hub.log.epoch}-1`]);
    // 7–11: retention removes pages 1 and 2; page 1 is the only page the cached root names.
    await publish(running, 5);
    expect(running.hub.log.oldestSeq).toBe(7);
    const fromCache: typeof fetch = (input, init) =>
      String(input instanceof Request ? input.url : input) === rootUrl
        ? Promise.resolve(new Response(cached, { headers: { 'content-type': 'application/n-quads' } }))
        : fetch(input, init);
    stateDir = mkdtempSync(join(tmpdir(), 'ldes-client-state-'));
    const client = ldes.replicateLDES(
      ldes.intoConfig({ url: running.hub.definition.iri, polling: false, statePath: stateDir, fetch: fromCache }),
      'ascending',
    );
    const reader = client.stream({ highWaterMark: 10 }).getReader() as ReadableStreamDefaultReader<Member>;
    try {
      const members = await read(reader, Number.POSITIVE_INFINITY);
      expect(members.map((member) => member.id.value)).toEqual(await Promise.all([7, 8, 9, 10, 11].map((seq) => sseElementIri(running, seq))));
    } finally {
      await reader.cancel();
      await client.close();
    }
  });
});
