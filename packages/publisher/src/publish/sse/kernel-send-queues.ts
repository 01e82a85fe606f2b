import { readFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread, workerModuleUrl } from '../../worker-thread.js';
import type { TableReply, TableRequest } from './kernel-table-protocol.js';

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
 * `/proc/net/tcp` and `/proc/net/tcp6` (Linux): one read of each gives every connection's
 * `tx_queue`. One read and one parse per check serve every watched socket, with nothing but
 * Node; it is what a check uses where `ioctl(SIOCOUTQ)` per socket (`socket-send-queue.ts`,
 * through the optional `koffi`) cannot be called, or with `subscriberSendQueueReader: table`.
 * Its cost grows with every TCP connection of the network namespace, the two readers compared
 * in docs/architecture.md ("How a check reads the kernel's queues").
 *
 * The kernel prints such a table one page (4 kB, ~27 lines) per `read()`: 10 000 connections are
 * ~400 reads. They are made on a worker thread of the instance's own (`kernel-table-reader.ts`),
 * synchronously, into memory the two threads share, decoded once on the event loop: read with
 * `fs.promises.readFile`, each page cost a round trip through the thread pool (a task queued, a
 * thread woken, a promise settled) that added as much again as the kernel's printing; read
 * synchronously on the event loop, the printing (~2 µs a line) held up the broadcasts. The parse
 * stays on the event loop. Where no worker can be started, the tables are read with `readFile`.
 */
export class ProcNetTcpSendQueues implements KernelSendQueues {
  readonly #files: readonly string[];
  #reader: TableReader | undefined;

  constructor(files: readonly string[] = ['/proc/net/tcp', '/proc/net/tcp6']) {
    this.#files = files;
  }

  async snapshot(found: (key: string, queuedBytes: number) => void): Promise<boolean> {
    this.#reader ??= new TableReader();
    const texts = await this.#reader.read(this.#files).catch(() => readEach(this.#files));
    let any = false;
    for (const text of texts) {
      if (text === null) continue;
      any = true;
      parseProcNetTcp(text, found);
    }
    return any;
  }
}

/** The tables read with `fs.promises.readFile`, on the thread pool: where no reader thread runs. */
function readEach(files: readonly string[]): Promise<Array<string | null>> {
  return Promise.all(files.map((file) => readFile(file, 'latin1').catch(() => null)));
}

/** Shared memory the tables are first read into (bytes): ~50 000 lines; doubled when they do not fit. */
const INITIAL_TABLE_BYTES = 8 * 1024 * 1024;
/** The most shared memory the tables may take (bytes), ~1.7 million lines: past it, `readFile`. */
const MAX_TABLE_BYTES = 256 * 1024 * 1024;

/**
 * The reader thread, started at the first snapshot and referenced only while a request is out
 * (idle, it never keeps the process alive); one request at a time. A thread that fails or exits
 * rejects what it was asked, and the next request starts another.
 */
class TableReader {
  #thread: Worker | undefined;
  #shared = new SharedArrayBuffer(INITIAL_TABLE_BYTES);
  #nextId = 0;
  #pending: { readonly id: number; settle(reply: TableReply | Error): void } | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  read(files: readonly string[]): Promise<Array<string | null>> {
    const result = this.#queue.then(() => this.#readAll(files));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #readAll(files: readonly string[]): Promise<Array<string | null>> {
    for (;;) {
      const shared = this.#shared;
      const reply = await this.#ask(files, shared);
      if (!reply.overflow) return reply.ranges.map((range) => (range === null ? null : Buffer.from(shared, range[0], range[1] - range[0]).toString('latin1')));
      if (shared.byteLength * 2 > MAX_TABLE_BYTES) throw new Error('the TCP tables outgrew the reader\'s memory');
      this.#shared = new SharedArrayBuffer(shared.byteLength * 2);
    }
  }

  #ask(files: readonly string[], shared: SharedArrayBuffer): Promise<TableReply> {
    const thread = this.#start();
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      // Referenced while a request is out, so that the process waits for its answer.
      thread.ref();
      this.#pending = {
        id,
        settle: (reply) => {
          thread.unref();
          if (reply instanceof Error) reject(reply);
          else resolve(reply);
        },
      };
      thread.postMessage({ id, files, shared } satisfies TableRequest);
    });
  }

  #start(): Worker {
    if (this.#thread !== undefined) return this.#thread;
    const thread = startWorkerThread(workerModuleUrl('kernel-table-reader', import.meta.url));
    thread.on('message', (reply: TableReply) => {
      if (this.#pending?.id !== reply.id) return;
      const { settle } = this.#pending;
      this.#pending = undefined;
      settle(reply);
    });
    const failed = (error: Error) => {
      if (this.#thread !== thread) return;
      this.#thread = undefined;
      const pending = this.#pending;
      this.#pending = undefined;
      pending?.settle(error);
    };
    thread.on('error', failed);
    thread.on('exit', (code) => failed(new Error(`the kernel table reader exited (code ${code})`)));
    // After the listeners: adding a 'message' listener refs the thread again.
    thread.unref();
    this.#thread = thread;
    return thread;
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
