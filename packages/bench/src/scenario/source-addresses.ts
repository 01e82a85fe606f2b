import type { HeldPorts, PortRange, PortUsage } from '../collect/port-usage.js';

/**
 * Client connections per source address at most (`--clients-per-address`): of the ~28 000
 * ephemeral ports of an address, the rest stays free for the TIME_WAIT of the runs before (a
 * closed connection holds its port for 60 s) and for the next run.
 */
export const DEFAULT_CLIENTS_PER_SOURCE_ADDRESS = 8_000;
/** Source addresses the fleet may use, 127.0.0.1 to 127.0.0.N (`--source-addresses`). */
export const DEFAULT_SOURCE_ADDRESSES = 16;
/** The most loopback source addresses the bench takes: 127.0.0.1 to 127.0.0.254. */
export const MAX_SOURCE_ADDRESSES = 254;
/** Spread even a small fleet over this many addresses, so that every run exercises the spreading. */
export const MIN_SOURCE_ADDRESSES = 2;

export interface SourceAddressRequest {
  readonly clients: number;
  readonly clientsPerAddress: number;
  /** How many of 127.0.0.1, 127.0.0.2, … may be used. */
  readonly candidates: number;
  readonly range: PortRange;
  readonly usage: PortUsage;
}

/** The addresses chosen, and what each had free when it was chosen. */
export interface SourceAddressPlan {
  readonly addresses: readonly string[];
  /** Clients per address (the fleet deals them round-robin: the last ones may get one fewer). */
  readonly clientsPerAddress: number;
  /** Addresses passed over because their free ports could not hold their share. */
  readonly skipped: ReadonlyArray<{ readonly address: string; readonly freePorts: number }>;
}

/** The run cannot have the ports it needs: what is free, what it needs, and what would help. */
export class SourcePortsExhaustedError extends Error {
  readonly code = 'BENCH_ERR_SOURCE_PORTS';
  constructor(
    readonly needed: number,
    readonly freePorts: number,
    readonly candidates: number,
    readonly timeWaitClearsInSeconds: number,
  ) {
    super(
      `${needed} client connections need ${needed} free ephemeral ports, but ${candidates === 1 ? '127.0.0.1 has' : `127.0.0.1 to 127.0.0.${candidates} have`} ${freePorts} free ` +
        `(the others are open or in TIME_WAIT)` +
        (timeWaitClearsInSeconds > 0 ? `; the TIME_WAIT ports free within ${timeWaitClearsInSeconds} s: wait that long` : '') +
        (candidates < MAX_SOURCE_ADDRESSES ? `, or spread the clients over more addresses with --source-addresses ${Math.min(MAX_SOURCE_ADDRESSES, candidates * 2)}` : ''),
    );
    this.name = 'SourcePortsExhaustedError';
  }
}

export const candidateAddress = (index: number) => `127.0.0.${index + 1}`;

/**
 * The source address of client `fleetIndex`: client i goes to instance i mod `instances`, and
 * the clients of an instance alternate over the addresses.
 */
export const sourceAddressOf = (fleetIndex: number, instances: number, addresses: readonly string[]): string =>
  addresses[Math.floor(fleetIndex / instances) % addresses.length] ?? '127.0.0.1';

/**
 * The source port of each client's first connection (pure; index: the client's number in the
 * fleet), each on the client's address (`sourceAddressOf`), in `range`, and none of `held`: the
 * ports open or in TIME_WAIT on that address or on the wildcard address when the plan was made.
 * A client for which no port is left gets 0: the kernel chooses, as `bind()` with port 0 does.
 * Ports are dealt from the bottom of the range up, so two addresses use the same numbers: a port
 * is held per address.
 */
export function assignSourcePorts(request: {
  readonly clients: number;
  readonly instances: number;
  readonly addresses: readonly string[];
  readonly range: PortRange;
  readonly held: HeldPorts;
}): number[] {
  const { clients, instances, addresses, range, held } = request;
  const wildcard = held.get('*');
  const next = new Map(addresses.map((address) => [address, range.low]));
  const ports: number[] = [];
  for (let fleetIndex = 0; fleetIndex < clients; fleetIndex++) {
    const address = sourceAddressOf(fleetIndex, instances, addresses);
    const own = held.get(address);
    let port = next.get(address)!;
    while (port <= range.high && (own?.has(port) === true || wildcard?.has(port) === true)) port++;
    ports.push(port <= range.high ? port : 0);
    next.set(address, port + 1);
  }
  return ports;
}

/** Ports of `address` a socket bound to it may take now: the range, less its own and the wildcard-bound sockets'. */
export function freePorts(address: string, range: PortRange, usage: PortUsage): number {
  const held = (key: string) => (usage.get(key)?.inUse ?? 0) + (usage.get(key)?.timeWait ?? 0);
  return Math.max(0, range.high - range.low + 1 - held(address) - held('*'));
}

/**
 * Chooses the source addresses of a fleet (pure): as few as hold `clientsPerAddress` each (at
 * least `MIN_SOURCE_ADDRESSES`), each with room for its share beside the ports already open or in
 * TIME_WAIT there; an address without room is passed over, and the share shrinks over more
 * addresses until one fits. Throws `SourcePortsExhaustedError` when no spread over the candidates fits.
 */
export function planSourceAddresses(request: SourceAddressRequest): SourceAddressPlan {
  const { clients, clientsPerAddress, candidates, range, usage } = request;
  const addresses = Array.from({ length: candidates }, (_, index) => candidateAddress(index));
  const free = new Map(addresses.map((address) => [address, freePorts(address, range, usage)]));
  const fewest = Math.min(candidates, Math.max(Math.min(MIN_SOURCE_ADDRESSES, clients), Math.ceil(clients / clientsPerAddress)));
  for (let count = Math.max(1, fewest); count <= candidates; count++) {
    const share = Math.ceil(clients / count);
    const roomy = addresses.filter((address) => free.get(address)! >= share);
    if (roomy.length < count) continue;
    const chosen = roomy.slice(0, count);
    const last = addresses.indexOf(chosen.at(-1)!);
    return {
      addresses: chosen,
      clientsPerAddress: share,
      skipped: addresses.slice(0, last).filter((address) => !chosen.includes(address)).map((address) => ({ address, freePorts: free.get(address)! })),
    };
  }
  const clears = Math.max(0, ...[...usage.entries()].filter(([address]) => address === '*' || free.has(address)).map(([, counts]) => counts.timeWaitClearsInSeconds));
  throw new SourcePortsExhaustedError(clients, [...free.values()].reduce((sum, ports) => sum + ports, 0), candidates, clears);
}
