import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The TCP line of `/proc/net/sockstat`: sockets in use and the pages their buffers hold. */
export interface TcpSockstat {
  /** `inuse`: TCP sockets in use on the whole machine (both ends of a loopback connection count). */
  readonly inUse: number;
  /** `mem`: pages the kernel has allocated to TCP socket buffers (send and receive queues), machine-wide. */
  readonly memPages: number;
}

/**
 * Parses `/proc/net/sockstat` (`TCP: inuse 20014 orphan 0 tw 3 alloc 20017 mem 126`); null when
 * the text has no TCP line with both figures.
 */
export function parseSockstat(text: string): TcpSockstat | null {
  const line = text.split('\n').find((candidate) => candidate.startsWith('TCP:'));
  if (line === undefined) return null;
  const fields = line.slice('TCP:'.length).trim().split(/\s+/);
  const value = (name: string) => {
    const index = fields.indexOf(name);
    const parsed = index < 0 ? Number.NaN : Number(fields[index + 1]);
    return Number.isInteger(parsed) && parsed >= 0 ? parsed : undefined;
  };
  const inUse = value('inuse');
  const memPages = value('mem');
  return inUse === undefined || memPages === undefined ? null : { inUse, memPages };
}

/** The machine's TCP sockstat now (Linux); null elsewhere. */
export function readSockstat(): TcpSockstat | null {
  try {
    return parseSockstat(readFileSync('/proc/net/sockstat', 'utf8'));
  } catch {
    return null;
  }
}

/** The page size the kernel counts `mem` and `statm` in, when `getconf` cannot say (bytes). */
export const DEFAULT_PAGE_SIZE_BYTES = 4096;

let pageSize: number | undefined;

/** `getconf PAGESIZE`, read once; `DEFAULT_PAGE_SIZE_BYTES` when it cannot be read. */
export function pageSizeBytes(): number {
  if (pageSize === undefined) {
    try {
      const parsed = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim());
      pageSize = Number.isInteger(parsed) && parsed > 0 ? parsed : DEFAULT_PAGE_SIZE_BYTES;
    } catch {
      pageSize = DEFAULT_PAGE_SIZE_BYTES;
    }
  }
  return pageSize;
}
