import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, appendFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatNames } from '@rdf-stream/protocol';
import { LogAppendError, LogOpenError } from '../../../src/log/event-log.js';
import { FileEventLog, type FileEventLogOptions } from '../../../src/log/file-event-log.js';
import type { LoggedElement } from '../../../src/render/render-element.js';
import { loggedElement } from '../../support/logged-element.js';
import { writeVersion2Log } from '../../support/version-2-log.js';
import { mountSmallFilesystem } from '../../support/small-filesystem.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'file-log-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Logged {
  readonly level: string;
  readonly fields: object;
  readonly message: string;
}

function options(directory: string, overrides: Partial<FileEventLogOptions> = {}): FileEventLogOptions & { readonly logged: Logged[] } {
  const logged: Logged[] = [];
  const record = (level: string) => (fields: object, message: string) => void logged.push({ level, fields, message });
  return {
    streamId: 'parking',
    directory,
    formats: formatNames,
    pageElements: 4,
    retention: { retainedElements: 1_000, retainedSeconds: 0 },
    cacheBytes: 1024 * 1024,
    syncIntervalMs: 0,
    maxPendingBytes: 1024 * 1024,
    retentionIntervalMs: 60_000,
    logger: { info: record('info'), warn: record('warn'), error: record('error') },
    logged,
    ...overrides,
  };
}

async function open(directory: string, overrides: Partial<FileEventLogOptions> = {}) {
  const log = await FileEventLog.open(options(directory, overrides));
  cleanups.push(() => void log.close());
  return log;
}

/** Appends elements `from`…`to` in one event-loop turn (they share syncs). */
const appendRange = (log: FileEventLog, from: number, to: number, epoch = log.epoch) =>
  Promise.all(Array.from({ length: to - from + 1 }, (_, index) => log.append(loggedElement(from + index, undefined, epoch))));

const segments = (directory: string) => readdirSync(directory).filter((name) => name.endsWith('.seg')).sort();

/**
 * Elements as an older publisher rendered them: multi-line documents that end with a newline
 * (JSON-LD without one), blank lines and indentation included; element 2 carries a key.
 */
function oldLogElements(count: number): LoggedElement[] {
  return Array.from({ length: count }, (_, index) => {
    const seq = index + 1;
    const element = loggedElement(seq, undefined, 'oldepoch01');
    const documents = Object.fromEntries(
      formatNames.map((format) => [
        format,
        Buffer.from(format === 'jsonld' ? `{\n  "@id": "${element.graph}",\n  "n": ${seq}\n}` : `@prefix ex: <http://example.org/> .\n\n<${element.graph}>\n    ex:${format} ${seq} .\n`),
      ]),
    ) as LoggedElement['documents'];
    return { ...element, documents, ...(seq === 2 ? { idempotency: { key: 'key-2', fingerprint: 'f2' } } : {}) };
  });
}

/** Every element of `expected` reads back from `log` with the same fields and documents. */
async function expectSameElements(log: FileEventLog, expected: readonly LoggedElement[]): Promise<void> {
  const read = await log.read(1, expected.length + 10);
  expect(read.map((element) => element.seq)).toEqual(expected.map((element) => element.seq));
  read.forEach((element, index) => {
    const wanted = expected[index]!;
    expect([element.epoch, element.graph, element.generatedAt, element.idempotency]).toEqual([wanted.epoch, wanted.graph, wanted.generatedAt, wanted.idempotency]);
    for (const format of formatNames) expect(element.documents[format].toString(), format).toBe(wanted.documents[format].toString());
  });
}

describe('FileEventLog', () => {
  it("tells when each page started from its first record, after a restart too, and nothing for a page removed or not begun", async () => {
    const dir = scratch();
    const first = await open(dir, { retention: { retainedElements: 5, retainedSeconds: 0 } });
    await appendRange(first, 1, 10);
    // Pages of 4: 1–4, 5–8, 9–10. At least 5 kept, by whole pages: 5–10.
    await first.applyRetention();
    const startOf = (seq: number) => loggedElement(seq).generatedAt;
    expect(await first.pageStartedAt(2)).toEqual(startOf(5));
    await first.close();
    const log = await open(dir, { retention: { retainedElements: 5, retainedSeconds: 0 }, cacheBytes: 0 });
    expect([await log.pageStartedAt(1), await log.pageStartedAt(2), await log.pageStartedAt(3), await log.pageStartedAt(4)]).toEqual([
      undefined,
      startOf(5),
      startOf(9),
      undefined,
    ]);
  });

  it('keeps elements across a restart: same epoch, numbering continues, the same bytes read back', async () => {
    const dir = scratch();
    const first = await open(dir);
    await appendRange(first, 1, 6);
    const epoch = first.epoch;
    await first.close();

    const reopened = await open(dir);
    expect([reopened.epoch, reopened.oldestSeq, reopened.latestSeq, reopened.nextSeq]).toEqual([epoch, 1, 6, 7]);
    expect(reopened.latest()?.seq).toBe(6);
    const element = await reopened.get(3);
    const expected = loggedElement(3, undefined, epoch);
    expect(element?.graph).toBe(expected.graph);
    expect(element?.generatedAt).toEqual(expected.generatedAt);
    for (const format of formatNames) expect(element?.documents[format].equals(expected.documents[format])).toBe(true);
    await reopened.append(loggedElement(7, undefined, epoch));
    expect(reopened.latestSeq).toBe(7);
    // One segment file per page of 4: 1–4 and 5–7.
    expect(segments(dir)).toEqual(['000000000001.seg', '000000000002.seg']);
  });

  it('appends made in one turn resolve in order and become visible only once durable', async () => {
    const log = await open(scratch());
    const seen: number[] = [];
    log.onAppended((latestSeq) => seen.push(latestSeq));
    const appends = [1, 2, 3].map((seq) => log.append(loggedElement(seq, undefined, log.epoch)).then(() => seq));
    // Reserved at once, visible to no reader yet.
    expect([log.nextSeq, log.latestSeq, await log.get(1)]).toEqual([4, 0, undefined]);
    const order: number[] = [];
    await Promise.all(appends.map((append) => append.then((seq) => order.push(seq))));
    expect(order).toEqual([1, 2, 3]);
    expect(seen.at(-1)).toBe(3);
  });

  it('reads from disk what the cache no longer holds', async () => {
    const dir = scratch();
    const log = await open(dir, { cacheBytes: 1 });
    await appendRange(log, 1, 9);
    expect((await log.read(2, 5)).map((element) => element.seq)).toEqual([2, 3, 4, 5, 6]);
    expect((await log.get(8))?.documents.turtle.toString()).toContain('turtle element 8');
  });

  it('cuts off a record torn by a crash (the file truncated inside it), and goes on after the last whole one', async () => {
    const dir = scratch();
    const log = await open(dir);
    await appendRange(log, 1, 3);
    await log.close();
    const file = join(dir, '000000000001.seg');
    truncateSync(file, statSync(file).size - 7);

    const reopened = await FileEventLog.open(options(dir));
    cleanups.push(() => void reopened.close());
    expect([reopened.latestSeq, reopened.nextSeq]).toEqual([2, 3]);
    expect(await reopened.get(3)).toBeUndefined();
    await reopened.append(loggedElement(3, undefined, reopened.epoch));
    await reopened.close();
    const again = await open(dir);
    expect((await again.read(1, 10)).map((element) => element.seq)).toEqual([1, 2, 3]);
  });

  it('cuts off garbage written after the last record, and logs it', async () => {
    const dir = scratch();
    const log = await open(dir);
    await appendRange(log, 1, 2);
    await log.close();
    const file = join(dir, '000000000001.seg');
    const size = statSync(file).size;
    appendFileSync(file, Buffer.from('garbage that is not a record: a torn page from another write'));

    const reopenedOptions = options(dir);
    const reopened = await FileEventLog.open(reopenedOptions);
    cleanups.push(() => void reopened.close());
    expect(reopened.latestSeq).toBe(2);
    expect(statSync(file).size).toBe(size);
    expect(reopenedOptions.logged).toContainEqual(expect.objectContaining({ level: 'warn', message: 'cut off a torn tail of the log' }));
  });

  it('removes whole pages beyond retainedElements (the limit), in the background of appends', async () => {
    const dir = scratch();
    const log = await open(dir, { retention: { retainedElements: 6, retainedSeconds: 0 } });
    await appendRange(log, 1, 10);
    await log.applyRetention();
    // The 6th newest (5) is on page 2 (5–8): page 1 goes.
    expect([log.oldestSeq, log.latestSeq]).toEqual([5, 10]);
    expect(segments(dir)).toEqual(['000000000002.seg', '000000000003.seg']);
    expect(await log.get(4)).toBeUndefined();
    expect((await log.read(1, 100)).map((element) => element.seq)).toEqual([5, 6, 7, 8, 9, 10]);
    await log.close();
    const reopened = await open(dir);
    expect([reopened.oldestSeq, reopened.latestSeq]).toEqual([5, 10]);
  });

  it('removes closed pages older than retainedSeconds, never the newest page', async () => {
    const dir = scratch();
    const log = await open(dir, { retention: { retainedElements: 1_000, retainedSeconds: 60 } });
    await appendRange(log, 1, 9);
    // Element n was generated at 1 800 000 000 000 + n s: at +66 s, pages 1 (≤ +4 s) is older than 60 s, page 2 (≤ +8 s) too.
    await log.applyRetention(1_800_000_000_000 + 66_000);
    expect(log.oldestSeq).toBe(5);
    await log.applyRetention(1_800_000_000_000 + 69_000);
    expect([log.oldestSeq, log.latestSeq]).toEqual([9, 9]);
    await log.applyRetention(1_800_000_000_000 + 999_000);
    expect([log.oldestSeq, log.latestSeq]).toEqual([9, 9]);
  });

  it('keeps each element\'s idempotency key across a restart; stampedElements reads the newest within the time and count bounds', async () => {
    const dir = scratch();
    const first = await open(dir);
    // Elements 1–10, one a second; the even ones carry a key.
    for (let seq = 1; seq <= 10; seq++) {
      const element = loggedElement(seq, undefined, first.epoch);
      await first.append(seq % 2 === 0 ? { ...element, idempotency: { key: `key-${seq}`, fingerprint: `print-${seq}` } } : element);
    }
    await first.close();

    const reopened = await open(dir);
    expect((await reopened.get(4))?.idempotency).toEqual({ key: 'key-4', fingerprint: 'print-4' });
    expect((await reopened.get(5))?.idempotency).toBeUndefined();
    const keysOf = (stamped: Awaited<ReturnType<FileEventLog['stampedElements']>>) => stamped.map((element) => element.idempotency.key);
    // Everything (across three pages of 4), oldest first, with what an answer needs.
    const all = await reopened.stampedElements(0, 1_000);
    expect(keysOf(all)).toEqual(['key-2', 'key-4', 'key-6', 'key-8', 'key-10']);
    expect(all[0]).toEqual({ seq: 2, graph: loggedElement(2, undefined, first.epoch).graph, generatedAt: loggedElement(2).generatedAt, idempotency: { key: 'key-2', fingerprint: 'print-2' } });
    // At most the newest 5 elements (6–10), at the limit.
    expect(keysOf(await reopened.stampedElements(0, 5))).toEqual(['key-6', 'key-8', 'key-10']);
    // Only those generated at or after element 7's time.
    expect(keysOf(await reopened.stampedElements(loggedElement(7).generatedAt.getTime(), 1_000))).toEqual(['key-8', 'key-10']);
    expect(await reopened.stampedElements(0, 0)).toEqual([]);
  });

  it('upgrades a version 2 log (SSE frames) to version 3 (documents) when a writer opens it: same epoch, elements, keys and numbering', async () => {
    const dir = scratch();
    const elements = oldLogElements(6);
    writeVersion2Log(dir, { epoch: 'oldepoch01', pageElements: 4 }, elements);
    // A replica never rewrites files: it refuses the old log, naming it and its version.
    await expect(FileEventLog.open(options(dir, { role: 'replica' }))).rejects.toThrow(/log\.json has format version 2; a cluster worker reads version 3/);

    const upgradeOptions = options(dir);
    const log = await FileEventLog.open(upgradeOptions);
    cleanups.push(() => void log.close());
    expect(JSON.parse(readFileSync(join(dir, 'log.json'), 'utf8'))).toMatchObject({ version: 3, epoch: 'oldepoch01', pageElements: 4 });
    expect(readdirSync(dir).filter((name) => name.includes('.v3'))).toEqual([]);
    expect(upgradeOptions.logged).toContainEqual(expect.objectContaining({ level: 'info', message: 'upgraded the log', fields: expect.objectContaining({ from: 2, to: 3, segments: 2, elements: 6 }) }));
    expect([log.epoch, log.oldestSeq, log.latestSeq, log.nextSeq]).toEqual(['oldepoch01', 1, 6, 7]);
    await expectSameElements(log, elements);
    expect((await log.stampedElements(0, 10)).map((element) => element.idempotency.key)).toEqual(['key-2']);

    await log.append(loggedElement(7, undefined, log.epoch));
    await log.close();
    const reopened = await open(dir);
    await expectSameElements(reopened, [...elements, loggedElement(7, undefined, 'oldepoch01')]);
  });

  it('upgrades a version 1 log the same way', async () => {
    const dir = scratch();
    const elements = oldLogElements(3).map(({ idempotency: _key, ...element }) => element);
    writeVersion2Log(dir, { epoch: 'oldepoch01', pageElements: 4, version: 1 }, elements);
    const log = await open(dir);
    expect(JSON.parse(readFileSync(join(dir, 'log.json'), 'utf8'))).toMatchObject({ version: 3 });
    await expectSameElements(log, elements);
  });

  it('an upgrade cut short before log.json said version 3 runs again; one cut short after it is completed', async () => {
    // Before the commit: a stray upgraded segment of garbage beside the version 2 ones.
    const before = scratch();
    const elements = oldLogElements(6);
    writeVersion2Log(before, { epoch: 'oldepoch01', pageElements: 4 }, elements);
    writeFileSync(join(before, '000000000001.seg.v3'), randomBytes(100));
    await expectSameElements(await open(before), elements);

    // After the commit: log.json says 3, the segments are still the version 2 ones, and their
    // upgraded copies wait beside them.
    const after = scratch();
    const first = await open(after);
    await appendRange(first, 1, 6);
    await first.close();
    for (const name of segments(after)) renameSync(join(after, name), join(after, `${name}.v3`));
    const meta = JSON.parse(readFileSync(join(after, 'log.json'), 'utf8')) as { epoch: string };
    const old = Array.from({ length: 6 }, (_, index) => loggedElement(index + 1, undefined, meta.epoch));
    const staging = scratch();
    writeVersion2Log(staging, { epoch: meta.epoch, pageElements: 4 }, old);
    for (const name of segments(staging)) writeFileSync(join(after, name), readFileSync(join(staging, name)));
    const reopened = await open(after);
    expect(readdirSync(after).filter((name) => name.includes('.v3'))).toEqual([]);
    await expectSameElements(reopened, old);
  });

  it('leaves out a torn tail of a version 2 segment when it upgrades it, as recovery would cut it', async () => {
    const dir = scratch();
    const elements = oldLogElements(3);
    writeVersion2Log(dir, { epoch: 'oldepoch01', pageElements: 4 }, elements);
    const file = join(dir, '000000000001.seg');
    truncateSync(file, statSync(file).size - 7);
    const upgradeOptions = options(dir);
    const log = await FileEventLog.open(upgradeOptions);
    cleanups.push(() => void log.close());
    expect(log.latestSeq).toBe(2);
    await expectSameElements(log, elements.slice(0, 2));
    expect(upgradeOptions.logged).toContainEqual(expect.objectContaining({ level: 'warn', message: 'the upgrade left out a torn tail of the log' }));
  });

  it('refuses to open a log of another format version, or a damaged log.json', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'log.json'), JSON.stringify({ format: 'rdf-stream-log', version: 99, epoch: 'abc', pageElements: 4, formats: [] }));
    await expect(FileEventLog.open(options(dir))).rejects.toThrow(LogOpenError);
    await expect(FileEventLog.open(options(dir))).rejects.toThrow(/format version 99/);
    writeFileSync(join(dir, 'log.json'), '{"format":"rdf-stream-log"');
    await expect(FileEventLog.open(options(dir))).rejects.toThrow(/not JSON/);
  });

  it('refuses a data directory it cannot create', async () => {
    const file = join(scratch(), 'a-file');
    writeFileSync(file, '');
    await expect(FileEventLog.open(options(join(file, 'streams', 'parking')))).rejects.toThrow(/ENOTDIR/);
  });

  it('refuses to append out of sequence, and changes nothing', async () => {
    const log = await open(scratch());
    await appendRange(log, 1, 1);
    await expect(log.append(loggedElement(3, undefined, log.epoch))).rejects.toThrow(/Expected sequence number 2/);
    expect([log.latestSeq, log.nextSeq]).toEqual([1, 2]);
  });

  it('refuses appends beyond maxPendingBytes (the limit) while earlier ones wait for their sync', async () => {
    const log = await open(scratch(), { maxPendingBytes: 500 });
    const first = log.append(loggedElement(1, undefined, log.epoch));
    // The first is pending (~215 bytes): a second fits, a third would exceed 500.
    const second = log.append(loggedElement(2, undefined, log.epoch));
    const third = log.append(loggedElement(3, undefined, log.epoch));
    await expect(third).rejects.toMatchObject({ name: 'LogAppendError', code: 'EBACKLOG' });
    await Promise.all([first, second]);
    expect(log.latestSeq).toBe(2);
  });

  it('on a full disk, fails appends whole (ENOSPC), keeps what was durable, and resumes when space returns', async () => {
    const disk = mountSmallFilesystem(256);
    cleanups.push(() => disk.unmount());
    const dir = join(disk.path, 'streams', 'parking');
    const log = await open(dir, { pageElements: 1_000 });
    // Another file takes most of the disk; elements carry 16 KiB that do not compress.
    const filler = join(disk.path, 'filler');
    writeFileSync(filler, randomBytes(160 * 1024));
    const noise = new Map<number, Buffer>();
    const big = (seq: number) => {
      const element = loggedElement(seq, undefined, log.epoch);
      const bytes = noise.get(seq) ?? randomBytes(16 * 1024);
      noise.set(seq, bytes);
      return { ...element, documents: { ...element.documents, turtle: Buffer.concat([element.documents.turtle, bytes]) } };
    };
    let acknowledged = 0;
    let failure: unknown;
    for (let seq = 1; seq <= 20 && failure === undefined; seq++) {
      try {
        await log.append(big(seq));
        acknowledged = seq;
      } catch (error) {
        failure = error;
      }
    }
    expect(acknowledged).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(LogAppendError);
    expect((failure as LogAppendError).code).toBe('ENOSPC');
    expect(log.appendFailure?.code).toBe('ENOSPC');
    expect([log.latestSeq, log.nextSeq]).toEqual([acknowledged, acknowledged + 1]);
    await expect(log.append(big(acknowledged + 1))).rejects.toMatchObject({ code: 'ENOSPC' });

    // Space returns: the next element gets the next number, and the failure is over.
    rmSync(filler);
    await log.append(big(acknowledged + 1));
    expect([log.latestSeq, log.appendFailure]).toEqual([acknowledged + 1, undefined]);

    // Nothing half-written: reopened, the log holds exactly the acknowledged elements, intact.
    await log.close();
    const reopened = await open(dir);
    const elements = await reopened.read(1, 100);
    expect(elements.map((element) => element.seq)).toEqual(Array.from({ length: acknowledged + 1 }, (_, index) => index + 1));
    for (const element of elements) expect(element.documents.turtle.subarray(-16 * 1024).equals(noise.get(element.seq)!)).toBe(true);
  });
});
