import { readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import type { FormatName } from '@rdf-stream/protocol';
import { LogOpenError } from './event-log.js';
import { LOG_FORMAT_VERSION, type LogMeta, syncDirectory, writeDurably } from './log-directory.js';
import { decodeRecord, encodeRecord, joinPayload, splitPayload } from './log-record.js';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** The part of a logger the upgrade reports to. */
interface UpgradeLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** A segment's upgraded copy, written beside it until it replaces it. */
const UPGRADED_SUFFIX = '.v3';
const isSegment = (name: string) => /^\d{12}\.seg$/.test(name);
const isUpgraded = (name: string) => /^\d{12}\.seg\.v3$/.test(name);

/**
 * Upgrades a log of format version 1 or 2, whose records hold each format's SSE frame, to
 * version 3, whose records hold its document (log-record.ts): once, when a writer opens it.
 *
 * 1. Each segment's records are read in order (up to a torn tail, which recovery would cut
 *    anyway), each frame turned back into its document (its `data:` lines), and the records
 *    written again, compressed, to `{segment}.v3` beside the segment, made durable.
 * 2. `log.json` says version 3: the commit point, one atomic rename.
 * 3. Each `.v3` file replaces its segment.
 *
 * A crash before step 2 leaves the old log whole: its `.v3` files are written again by the next
 * upgrade. A crash after it leaves `.v3` files, which the next open moves into place
 * (`finishUpgrade`) before it reads anything. The epoch, page size and sequence numbers are
 * kept: ids, history pages and `Last-Event-ID`s stay valid across the upgrade.
 */
export async function upgradeLog(directory: string, meta: LogMeta, logger: UpgradeLogger): Promise<LogMeta> {
  const formats = meta.formats as FormatName[];
  const names = await readdir(directory);
  let elements = 0;
  try {
    for (const name of names.filter(isUpgraded)) await unlink(join(directory, name));
    const segments = names.filter(isSegment).sort();
    for (const name of segments) {
      const { records, cutBytes } = await upgradedRecords(await readFile(join(directory, name)), formats);
      if (cutBytes > 0) logger.warn({ directory, segment: name, cutBytes }, 'the upgrade left out a torn tail of the log');
      await writeFile(join(directory, `${name}${UPGRADED_SUFFIX}`), Buffer.concat(records), { flush: true });
      elements += records.length;
    }
    syncDirectory(directory);
    const upgraded: LogMeta = { ...meta, version: LOG_FORMAT_VERSION };
    writeDurably(join(directory, 'log.json'), `${JSON.stringify(upgraded, null, 2)}\n`);
    await finishUpgrade(directory);
    logger.info({ directory, from: meta.version, to: LOG_FORMAT_VERSION, segments: segments.length, elements }, 'upgraded the log');
    return upgraded;
  } catch (error) {
    if (error instanceof LogOpenError) throw error;
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new LogOpenError(
      `cannot upgrade the log in ${directory} from format version ${meta.version} to ${LOG_FORMAT_VERSION}: ${reason}. The log is unchanged until the upgrade completes; free space or fix permissions and start again, or start the publisher that wrote it`,
    );
  }
}

/** Moves the upgraded segments of a committed upgrade into place (a crash may have left them). */
export async function finishUpgrade(directory: string): Promise<void> {
  const upgraded = (await readdir(directory)).filter(isUpgraded);
  if (upgraded.length === 0) return;
  for (const name of upgraded) await rename(join(directory, name), join(directory, name.slice(0, -UPGRADED_SUFFIX.length)));
  syncDirectory(directory);
}

/** A version 1 or 2 segment's records as version 3 records, and the bytes of its tail left out. */
async function upgradedRecords(buffer: Buffer, formats: readonly FormatName[]): Promise<{ records: Buffer[]; cutBytes: number }> {
  const records: Buffer[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const decoded = decodeRecord(buffer, offset);
    if (decoded.kind !== 'record') break;
    let documents: Buffer[];
    try {
      const frames = splitPayload(await inflate(decoded.fields.payload), formats);
      documents = formats.map((format) => Buffer.from(frameDocument(frames[format], format !== 'jsonld')));
    } catch {
      break;
    }
    records.push(encodeRecord({ ...decoded.fields, payload: await deflate(joinPayload(documents)) }));
    offset += decoded.bytes;
  }
  return { records, cutBytes: buffer.length - offset };
}

/**
 * The document a version 1 or 2 record's SSE frame carries: its `data:` lines joined again, with
 * the final newline the frame left out when `endsWithNewline` (every format but JSON-LD).
 */
export function frameDocument(frame: Buffer, endsWithNewline: boolean): string {
  const lines = frame.toString('utf8').split('\n');
  const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice('data: '.length));
  return `${data.join('\n')}${endsWithNewline ? '\n' : ''}`;
}
