import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** The four ends of a TCP connection, as `net.Socket` gives them. */
export interface ConnectionEnds {
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
}

/**
 * What the kernel holds for every TCP connection of this network namespace: the bytes written
 * to a socket and not yet acknowledged by its peer (unsent + in flight, `write_seq − snd_una`,
 * what `SIOCOUTQ` gives for one socket).
 */
export interface KernelSendQueues {
  /**
   * Takes one snapshot and calls `found` for each connection in it, keyed as `connectionKey`
   * keys it. Resolves false when the system offers no such table (then nothing was found).
   */
  snapshot(found: (key: string, queuedBytes: number) => void): Promise<boolean>;
}

/**
 * Bytes of a table read per event-loop turn (16 pages, under a millisecond of the kernel printing
 * them): the reads between two yields are synchronous, and a turn is also when libuv accepts a
 * connection, so a snapshot taken while thousands connect must not hold the loop for long.
 */
const TABLE_BYTES_PER_TURN = 64 * 1024;
/** Room for one `read()` past `TABLE_BYTES_PER_TURN`: the kernel hands a table over a page at a time. */
const READ_MARGIN_BYTES = 64 * 1024;

/**
 * `/proc/net/tcp` and `/proc/net/tcp6` (Linux): one read of each gives every connection's
 * `tx_queue`. One read and one parse per check serve every watched socket, where a per-socket
 * `ioctl(SIOCOUTQ)` or `getsockopt(TCP_INFO)` would need a native addon (Node exposes neither)
 * and a system call per socket. Measured in docs/architecture.md ("Why one read of
 * `/proc/net/tcp`").
 *
 * The kernel prints such a table one page (4 kB, ~27 lines) per `read()`: 10 000 connections
 * are ~400 reads. Each is made here synchronously, `TABLE_BYTES_PER_TURN` per event-loop turn,
 * not as a read on the thread pool: there, each page cost a round trip (a task queued, a thread
 * woken, a promise settled) that added ~70 % to the kernel's own work.
 */
export class ProcNetTcpSendQueues implements KernelSendQueues {
  readonly #files: readonly string[];

  constructor(files: readonly string[] = ['/proc/net/tcp', '/proc/net/tcp6']) {
    this.#files = files;
  }

  async snapshot(found: (key: string, queuedBytes: number) => void): Promise<boolean> {
    let any = false;
    for (const file of this.#files) {
      let text: string;
      try {
        text = await readTable(file);
      } catch {
        continue; // No such table (another system, or IPv6 disabled).
      }
      any = true;
      parseProcNetTcp(text, found);
    }
    return any;
  }
}

/** The whole table, read in turns of `TABLE_BYTES_PER_TURN`. */
async function readTable(file: string): Promise<string> {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(TABLE_BYTES_PER_TURN + READ_MARGIN_BYTES);
    const parts: string[] = [];
    for (;;) {
      let used = 0;
      let read = 0;
      do {
        read = readSync(fd, buffer, used, buffer.length - used, null);
        used += read;
      } while (read > 0 && used < TABLE_BYTES_PER_TURN);
      parts.push(buffer.toString('latin1', 0, used));
      if (read === 0) return parts.join('');
      await nextTurn();
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Calls `found(key, txQueue)` for each line of a `/proc/net/tcp{,6}` table:
 * `  sl  local_address rem_address   st tx_queue:rx_queue …`, addresses as `connectionKey` writes
 * them. Contract: `text` is the whole table, as the kernel prints it (fixed-width hex fields).
 */
export function parseProcNetTcp(text: string, found: (key: string, queuedBytes: number) => void): void {
  let lineStart = text.indexOf('\n') + 1; // after the header
  while (lineStart > 0 && lineStart < text.length) {
    const lineEnd = text.indexOf('\n', lineStart);
    const end = lineEnd === -1 ? text.length : lineEnd;
    const colon = text.indexOf(':', lineStart); // `sl:`
    if (colon !== -1 && colon < end) {
      const localStart = colon + 2;
      const space = text.indexOf(' ', localStart);
      const endLength = space - localStart; // 13 (IPv4) or 37 (IPv6)
      const keyEnd = localStart + 2 * endLength + 1;
      const queueStart = keyEnd + 4; // ` st `
      if (space !== -1 && queueStart + 8 <= end) {
        found(text.slice(localStart, keyEnd), Number.parseInt(text.slice(queueStart, queueStart + 8), 16));
      }
    }
    lineStart = end + 1;
  }
}

/**
 * The key of a connection in `/proc/net/tcp{,6}`: `LOCAL:PORT REMOTE:PORT` in the kernel's hex
 * (each 32-bit word of the address in host byte order, the port big-endian). IPv4 addresses of
 * a dual-stack socket (`::ffff:a.b.c.d`) are keyed as the IPv6 table shows them. Undefined when
 * an end is unknown (a socket not connected, or already closed).
 */
export function connectionKey(ends: ConnectionEnds): string | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = ends;
  if (localAddress === undefined || localPort === undefined || remoteAddress === undefined || remotePort === undefined) return undefined;
  const local = addressHex(localAddress);
  const remote = addressHex(remoteAddress);
  if (local === undefined || remote === undefined || local.length !== remote.length) return undefined;
  return `${local}:${portHex(localPort)} ${remote}:${portHex(remotePort)}`;
}

const littleEndian = endianness() === 'LE';

const portHex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

function addressHex(address: string): string | undefined {
  const bytes = address.includes(':') ? ipv6Bytes(address) : ipv4Bytes(address);
  if (bytes === undefined) return undefined;
  let hex = '';
  for (let word = 0; word < bytes.length; word += 4) {
    const group = bytes.slice(word, word + 4);
    if (littleEndian) group.reverse();
    for (const byte of group) hex += byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return hex;
}

function ipv4Bytes(address: string): number[] | undefined {
  const parts = address.split('.').map(Number);
  return parts.length === 4 && parts.every((part) => Number.isInteger(part) && part >= 0 && part <= 255) ? parts : undefined;
}

function ipv6Bytes(address: string): number[] | undefined {
  let text = address.split('%')[0] as string;
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    // An IPv4 address in the last 32 bits (`::ffff:127.0.0.1`): written as two groups.
    const ipv4 = ipv4Bytes(last);
    if (ipv4 === undefined) return undefined;
    const group = (high: number, low: number) => ((high << 8) | low).toString(16);
    text = `${text.slice(0, lastColon + 1)}${group(ipv4[0] as number, ipv4[1] as number)}:${group(ipv4[2] as number, ipv4[3] as number)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === '' ? [] : half.split(':'));
  const front = groups(halves[0] as string);
  const back = halves.length === 2 ? groups(halves[1] as string) : [];
  const missing = 8 - front.length - back.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const bytes: number[] = [];
  for (const word of [...front, ...Array<string>(missing).fill('0'), ...back]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(word)) return undefined;
    const value = Number.parseInt(word, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  return bytes;
}
