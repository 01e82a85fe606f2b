import { readFileSync } from 'node:fs';
import { pageSizeBytes, readSockstat } from './sockstat.js';

/**
 * The publisher's resident memory and the machine's TCP memory at one moment: what memory per
 * connection is computed from (`analyze/memory-per-connection.ts`).
 */
export interface MemorySnapshot {
  /** Epoch ms. */
  readonly atMs: number;
  /** Clients connected when it was taken (0 for the baseline). */
  readonly connected: number;
  /** RSS of the publisher's processes (and the proxy's, if any), summed, from `/proc/<pid>/statm` (bytes). */
  readonly serverRssBytes: number;
  /** `/proc/net/sockstat`: TCP sockets in use machine-wide; null off Linux. */
  readonly tcpInUse: number | null;
  /** `/proc/net/sockstat`: TCP socket buffer memory machine-wide (bytes); null off Linux. */
  readonly tcpMemBytes: number | null;
}

/** Resident pages of a process (the second field of `/proc/<pid>/statm`); 0 when it is gone. */
function residentPages(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) || 0;
  } catch {
    return 0;
  }
}

/** Reads the snapshot now: a few small /proc files, cheap enough to take every half second. */
export function readMemorySnapshot(pids: readonly number[], connected: number): MemorySnapshot {
  const page = pageSizeBytes();
  const tcp = readSockstat();
  return {
    atMs: Date.now(),
    connected,
    serverRssBytes: pids.reduce((sum, pid) => sum + residentPages(pid) * page, 0),
    tcpInUse: tcp?.inUse ?? null,
    tcpMemBytes: tcp === null ? null : tcp.memPages * page,
  };
}
