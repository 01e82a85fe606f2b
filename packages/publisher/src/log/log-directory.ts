import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EPOCH } from '@rdf-stream/protocol';
import { LogOpenError } from './event-log.js';

/**
 * The on-disk format this code reads and writes; another one stops start-up. Version 3 records
 * hold each format's document (see log-record.ts). Versions 1 and 2 held SSE frames instead (2
 * added an ingest request's `Idempotency-Key`): a writer opening such a log upgrades it to
 * version 3 first (`log-upgrade.ts`); a replica refuses it, since only the writer rewrites
 * files. A publisher that reads only version 2 refuses an upgraded log.
 */
export const LOG_FORMAT = 'rdf-stream-log';
export const LOG_FORMAT_VERSION = 3;
/** Older versions a writer upgrades when it opens them. */
export const UPGRADABLE_VERSIONS: readonly number[] = [1, 2];

/** What `log.json` says of a log: written once, when the log is created. */
export interface LogMeta {
  readonly format: typeof LOG_FORMAT;
  readonly version: number;
  readonly epoch: string;
  readonly pageElements: number;
  /** The order of the documents in each record's payload. */
  readonly formats: readonly string[];
  readonly createdAt: string;
}

/** An epoch: 10 characters of [a-z0-9], never a `-`, so that `{epoch}-{seq}` splits unambiguously. */
export function newEpoch(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(10)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

const describe = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

/**
 * Reads `log.json` of the log in `directory`, creating the directory and the file if the log is
 * new (`create`). Throws `LogOpenError` for a directory that cannot be created or written, or a
 * log of another format or version. A writer (`create`) is handed a version 1 or 2 log as it is,
 * to upgrade it (`upgradeLog`); a replica is refused one.
 */
export function openLogMeta(
  directory: string,
  create: { readonly pageElements: number; readonly formats: readonly string[] } | undefined,
): { meta: LogMeta; created: boolean } {
  const file = join(directory, 'log.json');
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new LogOpenError(`cannot read ${file}: ${describe(error)}`);
    }
  }
  if (text !== undefined) {
    const meta = parseMeta(file, text);
    if (meta.version !== LOG_FORMAT_VERSION && create === undefined) {
      throw new LogOpenError(
        `${file} has format version ${meta.version}; a cluster worker reads version ${LOG_FORMAT_VERSION} only (the writer upgrades the log when it opens it)`,
      );
    }
    return { meta, created: false };
  }
  if (create === undefined) throw new LogOpenError(`no log in ${directory} (log.json is missing)`);
  const meta: LogMeta = {
    format: LOG_FORMAT,
    version: LOG_FORMAT_VERSION,
    epoch: newEpoch(),
    pageElements: create.pageElements,
    formats: create.formats,
    createdAt: new Date().toISOString(),
  };
  try {
    mkdirSync(directory, { recursive: true });
    writeDurably(file, `${JSON.stringify(meta, null, 2)}\n`);
  } catch (error) {
    throw new LogOpenError(`cannot create a log in ${directory}: ${describe(error)}`);
  }
  return { meta, created: true };
}

function parseMeta(file: string, text: string): LogMeta {
  let meta: Partial<LogMeta>;
  try {
    meta = JSON.parse(text) as Partial<LogMeta>;
  } catch {
    throw new LogOpenError(`${file} is not JSON: not a log of this publisher`);
  }
  if (meta.format !== LOG_FORMAT) throw new LogOpenError(`${file} is not a log of this publisher (format ${String(meta.format)})`);
  if (meta.version !== LOG_FORMAT_VERSION && !UPGRADABLE_VERSIONS.includes(meta.version as number)) {
    throw new LogOpenError(
      `${file} has format version ${String(meta.version)}; this publisher reads version ${LOG_FORMAT_VERSION} and upgrades versions ${UPGRADABLE_VERSIONS.join(' and ')}. Use the publisher that wrote it, or another --data-dir`,
    );
  }
  const valid =
    typeof meta.epoch === 'string' &&
    EPOCH.test(meta.epoch) &&
    Number.isSafeInteger(meta.pageElements) &&
    (meta.pageElements ?? 0) > 0 &&
    Array.isArray(meta.formats);
  if (!valid) throw new LogOpenError(`${file} is damaged: missing or invalid epoch, pageElements or formats`);
  return meta as LogMeta;
}

/** Writes `file` so that a crash leaves either the old content or the new, never a torn one. */
export function writeDurably(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { flush: true });
  renameSync(temporary, file);
  syncDirectory(join(file, '..'));
}

/** Makes a directory's entries (new, renamed or removed files) durable. */
export function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** What the lock file records of the process that holds the data directory. */
interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

/**
 * Takes the data directory for this process: one publisher writes a data directory at a time.
 * The lock file names its owner; a lock whose process is gone (e.g. after `kill -9`) is taken
 * over. Returns a function that releases it. Throws `LogOpenError` when another running process
 * holds it, or when the directory cannot be written.
 */
export function lockDataDirectory(directory: string): () => void {
  const file = join(directory, 'LOCK');
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    throw new LogOpenError(`cannot create the data directory ${directory}: ${describe(error)}`);
  }
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(owner), { flag: 'wx', flush: true });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new LogOpenError(`the data directory ${directory} is not writable: ${describe(error)}`);
      }
    }
    const holder = readLockOwner(file);
    if (holder !== undefined && holder.hostname === owner.hostname && holder.pid !== process.pid && isAlive(holder.pid)) {
      throw new LogOpenError(
        `the data directory ${directory} is in use by another publisher (pid ${holder.pid}, since ${holder.startedAt}); stop it or use another --data-dir`,
      );
    }
    // The holder is gone (or the file is unreadable): the lock is stale.
    rmSync(file, { force: true });
  }
  throw new LogOpenError(`cannot lock the data directory ${directory}`);
}

function readLockOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    if (typeof owner.pid === 'number' && typeof owner.hostname === 'string') return owner as LockOwner;
  } catch {
    // An empty or torn lock file (a crash while writing it) is stale.
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
