import { createRequire } from 'node:module';
import type { PublisherConfig } from '../../config/config-schema.js';
import type { MonitoredSocket } from './send-progress-monitor.js';

/**
 * Reads one connection's kernel send queue at once: the bytes written to its socket and not yet
 * acknowledged by its peer (`write_seq − snd_una`, the `tx_queue` of `/proc/net/tcp`).
 */
export interface SocketSendQueue {
  /** The socket's kernel send queue now (bytes); undefined when this socket's cannot be read. */
  queued(socket: MonitoredSocket): number | undefined;
}

/** Which way the process's send-progress monitors read kernel send queues (`subscriberSendQueueReader`). */
export type SendQueueReaderChoice = PublisherConfig['subscriberSendQueueReader'];

/**
 * `ioctl(fd, SIOCOUTQ)` on Linux (the value `ss` prints as Send-Q), called through `koffi`, an
 * optional dependency: Node gives neither `ioctl` nor `getsockopt(TCP_INFO)`. One system call
 * per socket and no parse, about 1.2 µs a socket on our machine, where one read of
 * `/proc/net/tcp` costs the kernel ~3.5 µs for every TCP connection of the network namespace,
 * idle, foreign or the peer's end of a loopback one included (docs/architecture.md).
 *
 * The socket's descriptor is its libuv handle's `fd` (`net.Socket`'s private `_handle`): a
 * socket with no such descriptor (closed, not a TCP socket, a test's stand-in) is not read here.
 */
class IoctlSendQueue implements SocketSendQueue {
  readonly #ioctl: (fd: number, request: number, out: Int32Array) => number;
  readonly #out = new Int32Array(1);

  constructor(ioctl: (fd: number, request: number, out: Int32Array) => number) {
    this.#ioctl = ioctl;
  }

  queued(socket: MonitoredSocket): number | undefined {
    const fd = (socket as { readonly _handle?: { readonly fd?: unknown } | null })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return undefined;
    // -1: not a connected TCP socket (a listening one, another kind of descriptor).
    return this.#ioctl(fd, SIOCOUTQ, this.#out) === 0 ? (this.#out[0] as number) : undefined;
  }
}

/** `TIOCOUTQ`, which TCP sockets answer as `SIOCOUTQ`: its value on the architectures below (asm-generic). */
const SIOCOUTQ = 0x5411;
/** Architectures whose Linux uses the generic ioctl numbers (powerpc, mips, sparc do not). */
const GENERIC_IOCTL_ARCHITECTURES = new Set(['x64', 'arm64', 'arm', 'ia32', 'riscv64', 'loong64', 's390x']);
/** The C libraries tried, glibc's then musl's. */
const LIBC_NAMES = ['libc.so.6', `libc.musl-${process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch}.so.1`];

let loaded: SocketSendQueue | undefined | null = null;

/**
 * The per-socket reader for `choice`: `ioctl(SIOCOUTQ)` where it can be called (Linux on the
 * architectures above, `koffi` installed and loadable, glibc or musl), else undefined (each
 * check reads the kernel's table). Loaded once per process.
 */
export function socketSendQueue(choice: SendQueueReaderChoice): SocketSendQueue | undefined {
  if (choice === 'table') return undefined;
  if (loaded === null) loaded = loadIoctl();
  return loaded;
}

interface Koffi {
  load(path: string): { func(signature: string): (...args: unknown[]) => unknown };
}

function loadIoctl(): SocketSendQueue | undefined {
  if (process.platform !== 'linux' || !GENERIC_IOCTL_ARCHITECTURES.has(process.arch)) return undefined;
  let koffi: Koffi;
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
  } catch {
    return undefined; // Not installed (an optional dependency), or no build for this system.
  }
  for (const name of LIBC_NAMES) {
    try {
      // Declared with a fixed third argument, though `ioctl` is variadic: on these
      // architectures' Linux ABIs a variadic function finds its integer and pointer arguments
      // where a fixed one does (x86-64 also passes in %al a count of vector registers, which
      // glibc's and musl's ioctl only use to skip saving them), and a fixed declaration spares
      // koffi working out the types of every call.
      const ioctl = koffi.load(name).func('int ioctl(int fd, unsigned long request, _Inout_ int32_t *out)');
      return new IoctlSendQueue(ioctl as (fd: number, request: number, out: Int32Array) => number);
    } catch {
      // Not this C library: the next.
    }
  }
  return undefined;
}
