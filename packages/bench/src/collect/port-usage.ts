import { readFileSync } from 'node:fs';

/** The kernel's ephemeral ports (`net.ipv4.ip_local_port_range`), both ends included. */
export interface PortRange {
  readonly low: number;
  readonly high: number;
}

/** Linux's default `ip_local_port_range`, when /proc cannot say. */
export const DEFAULT_PORT_RANGE: PortRange = { low: 32_768, high: 60_999 };

/** `/proc/net/tcp` state of a socket in TIME_WAIT (include/net/tcp_states.h). */
const TCP_TIME_WAIT = 0x06;
/** The unit of `tm->when` in /proc/net/tcp: clock ticks (USER_HZ) per second. */
const CLOCK_TICKS_PER_SECOND = 100;

/** `/proc/net/tcp` state of an established connection. */
const TCP_ESTABLISHED = 0x01;

/**
 * One socket of /proc/net/tcp{,6}: its local address (IPv4-mapped IPv6 as IPv4, wildcard `*`)
 * and port, its peer's port, and the bytes the kernel holds for it.
 */
export interface TcpSocketEntry {
  readonly address: string;
  readonly port: number;
  /** The other end's port (0 for a listener). */
  readonly remotePort: number;
  readonly established: boolean;
  readonly timeWait: boolean;
  /** TIME_WAIT only: seconds until the kernel frees the port. */
  readonly expiresInSeconds: number;
  /** `tx_queue`: bytes sent and not yet acknowledged by the other end. */
  readonly sendQueueBytes: number;
  /** `rx_queue`: bytes received and not yet read by the process. */
  readonly receiveQueueBytes: number;
}

/** What the port counts read of a socket: the port it holds, on which address, and until when. */
export type PortHolder = Pick<TcpSocketEntry, 'address' | 'port' | 'timeWait' | 'expiresInSeconds'>;

/** Ephemeral ports of one local address that a new socket bound to it cannot take. */
export interface AddressPortUsage {
  /** Open sockets (any state but TIME_WAIT), wildcard-bound ones included. */
  readonly inUse: number;
  readonly timeWait: number;
  /** When the last of its TIME_WAIT ports frees (seconds from the reading); 0 with none. */
  readonly timeWaitClearsInSeconds: number;
}

/** Port usage per local address; `*` holds the wildcard-bound sockets, which block a port on every address. */
export type PortUsage = ReadonlyMap<string, AddressPortUsage>;

/** `0100007F` (a little-endian word, as the kernel prints it on x86 and ARM) → `127.0.0.1`. */
const ipv4 = (hex: string) => [6, 4, 2, 0].map((offset) => Number.parseInt(hex.slice(offset, offset + 2), 16)).join('.');

function localAddress(hex: string): string | undefined {
  if (hex.length === 8) return hex === '00000000' ? '*' : ipv4(hex);
  if (hex.length !== 32) return undefined;
  if (/^0{32}$/.test(hex)) return '*';
  // ::ffff:a.b.c.d: words 0000…, 0000…, FFFF0000 (little-endian), then the IPv4 word.
  if (hex.slice(0, 24).toUpperCase() === '0000000000000000FFFF0000') return ipv4(hex.slice(24));
  return `ipv6:${hex}`;
}

/** Parses /proc/net/tcp or /proc/net/tcp6 (header line, then one socket a line); skips lines it cannot read. */
export function parseProcNetTcp(text: string): TcpSocketEntry[] {
  const entries: TcpSocketEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when …
    const fields = line.trim().split(/\s+/);
    const [local, remote, state, queues, timer] = fields.slice(1);
    if (local === undefined || remote === undefined || state === undefined || queues === undefined || timer === undefined) continue;
    const [addressHex = '', portHex = ''] = local.split(':');
    const address = localAddress(addressHex);
    const port = Number.parseInt(portHex, 16);
    const remotePort = Number.parseInt(remote.split(':')[1] ?? '', 16);
    const [sendQueueBytes, receiveQueueBytes] = queues.split(':').map((hex) => Number.parseInt(hex, 16));
    if (address === undefined || !Number.isInteger(port) || !Number.isInteger(remotePort) || !Number.isInteger(sendQueueBytes) || !Number.isInteger(receiveQueueBytes)) continue;
    const stateCode = Number.parseInt(state, 16);
    const timeWait = stateCode === TCP_TIME_WAIT;
    const ticks = Number.parseInt(timer.split(':')[1] ?? '0', 16);
    entries.push({
      address,
      port,
      remotePort,
      established: stateCode === TCP_ESTABLISHED,
      timeWait,
      expiresInSeconds: timeWait && ticks > 0 ? Math.ceil(ticks / CLOCK_TICKS_PER_SECOND) : 0,
      sendQueueBytes: sendQueueBytes!,
      receiveQueueBytes: receiveQueueBytes!,
    });
  }
  return entries;
}

/** Counts, per local address, the sockets holding a port of `range` (open or in TIME_WAIT). */
export function portUsage(entries: readonly PortHolder[], range: PortRange): PortUsage {
  const usage = new Map<string, { inUse: number; timeWait: number; timeWaitClearsInSeconds: number; ports: Set<number> }>();
  for (const entry of entries) {
    if (entry.port < range.low || entry.port > range.high) continue;
    const counts = usage.get(entry.address) ?? { inUse: 0, timeWait: 0, timeWaitClearsInSeconds: 0, ports: new Set<number>() };
    // Sockets sharing a port (a listener and its accepted connections) hold it once.
    if (counts.ports.has(entry.port)) continue;
    counts.ports.add(entry.port);
    if (entry.timeWait) {
      counts.timeWait++;
      counts.timeWaitClearsInSeconds = Math.max(counts.timeWaitClearsInSeconds, entry.expiresInSeconds);
    } else {
      counts.inUse++;
    }
    usage.set(entry.address, counts);
  }
  return new Map([...usage].map(([address, { ports: _ports, ...counts }]) => [address, counts]));
}

/** Ports of `range` held (open or in TIME_WAIT) per local address; `*`: on the wildcard address. */
export type HeldPorts = ReadonlyMap<string, ReadonlySet<number>>;

/** The ports of `range` each local address holds (open or in TIME_WAIT). */
export function heldPorts(entries: readonly PortHolder[], range: PortRange): HeldPorts {
  const held = new Map<string, Set<number>>();
  for (const entry of entries) {
    if (entry.port < range.low || entry.port > range.high) continue;
    const ports = held.get(entry.address) ?? new Set<number>();
    ports.add(entry.port);
    held.set(entry.address, ports);
  }
  return held;
}

export function parsePortRange(text: string): PortRange | undefined {
  const [low, high] = text.trim().split(/\s+/).map(Number);
  return low !== undefined && high !== undefined && Number.isInteger(low) && Number.isInteger(high) && low <= high ? { low, high } : undefined;
}

/** The ephemeral port range now (Linux); `DEFAULT_PORT_RANGE` elsewhere. */
export function readPortRange(): PortRange {
  try {
    return parsePortRange(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')) ?? DEFAULT_PORT_RANGE;
  } catch {
    return DEFAULT_PORT_RANGE;
  }
}

/** The machine's TCP sockets now, from /proc/net/tcp and /proc/net/tcp6 (Linux); none elsewhere. */
export function readTcpSockets(): TcpSocketEntry[] {
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) => {
    try {
      return parseProcNetTcp(readFileSync(file, 'utf8'));
    } catch {
      return [];
    }
  });
}

/** The machine's port usage now (Linux); empty elsewhere. */
export function readPortUsage(range: PortRange): PortUsage {
  return portUsage(readTcpSockets(), range);
}
