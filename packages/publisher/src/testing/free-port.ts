import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { pickFreePort } from '../bind-free-port.js';

/** How many ports below the kernel's ephemeral range a test port is drawn from. */
const TEST_PORTS = 16_384;
/** Ports tried before falling back to one the kernel picks. */
const ATTEMPTS = 64;
/** The lowest port drawn: below it are the well-known and registered services' ports. */
const LOWEST_TEST_PORT = 10_000;

/**
 * The ports a test may draw from, below the kernel's ephemeral range (Linux:
 * `/proc/sys/net/ipv4/ip_local_port_range`), or undefined where that range is unknown or
 * leaves no room below it.
 */
export function testPortRange(rangeFile = '/proc/sys/net/ipv4/ip_local_port_range'): { readonly low: number; readonly high: number } | undefined {
  let ephemeralLow: number;
  try {
    ephemeralLow = Number(readFileSync(rangeFile, 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(ephemeralLow)) return undefined;
  const high = ephemeralLow - 1;
  const low = Math.max(LOWEST_TEST_PORT, high - TEST_PORTS + 1);
  return high - low >= 1_000 ? { low, high } : undefined;
}

/** Whether `port` on `host` can be listened on now. */
function listenable(host: string, port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A port on `host` that was free a moment ago, for what must be told its port before it starts
 * (a child process, a broker, a second publisher on the port of one that stopped). Drawn at
 * random below the kernel's ephemeral range (`testPortRange`): a port the kernel picked (port
 * 0) comes from that range, where, between the probe's close and the real listen, any outgoing
 * connection on the machine may take it as its local port — in a test suite opening thousands of
 * connections at once, a listen then failed with EADDRINUSE. Where the range is unknown, or no
 * port drawn is free, the kernel picks. `random` draws the ports (tests give their own).
 */
export async function freePort(host = '127.0.0.1', random: () => number = Math.random): Promise<number> {
  const range = testPortRange();
  for (let attempt = 0; range !== undefined && attempt < ATTEMPTS; attempt++) {
    const port = range.low + Math.floor(random() * (range.high - range.low + 1));
    if (await listenable(host, port)) return port;
  }
  return pickFreePort(host, 1);
}
