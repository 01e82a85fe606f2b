import { describe, expect, it } from 'vitest';
import type { AddressPortUsage } from '../../../src/collect/port-usage.js';
import { assignSourcePorts, freePorts, planSourceAddresses, SourcePortsExhaustedError, sourceAddressOf } from '../../../src/scenario/source-addresses.js';

/** 1 000 ephemeral ports per address. */
const range = { low: 50_000, high: 50_999 };
const none = new Map<string, AddressPortUsage>();
const held = (inUse: number, timeWait = 0, timeWaitClearsInSeconds = 0): AddressPortUsage => ({ inUse, timeWait, timeWaitClearsInSeconds });

describe('planSourceAddresses', () => {
  it('spreads even a small fleet over two addresses', () => {
    expect(planSourceAddresses({ clients: 300, clientsPerAddress: 800, candidates: 16, range, usage: none })).toEqual({
      addresses: ['127.0.0.1', '127.0.0.2'],
      clientsPerAddress: 150,
      skipped: [],
    });
  });

  it('takes one address for a single client', () => {
    expect(planSourceAddresses({ clients: 1, clientsPerAddress: 800, candidates: 16, range, usage: none }).addresses).toEqual(['127.0.0.1']);
  });

  it('takes as many addresses as hold clientsPerAddress each', () => {
    const plan = planSourceAddresses({ clients: 2_401, clientsPerAddress: 800, candidates: 16, range, usage: none });
    expect(plan.addresses).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']);
    expect(plan.clientsPerAddress).toBe(601);
  });

  it('passes over an address whose ports are held open or in TIME_WAIT, saying how many it had free', () => {
    const usage = new Map([['127.0.0.1', held(100, 500, 40)]]);
    const plan = planSourceAddresses({ clients: 1_200, clientsPerAddress: 800, candidates: 16, range, usage });
    expect(plan.addresses).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(plan.skipped).toEqual([{ address: '127.0.0.1', freePorts: 400 }]);
  });

  it('counts the wildcard-bound ports against every address', () => {
    const usage = new Map([['*', held(300)], ['127.0.0.2', held(100)]]);
    expect(freePorts('127.0.0.1', range, usage)).toBe(700);
    expect(freePorts('127.0.0.2', range, usage)).toBe(600);
  });

  it('shrinks the share over more addresses when the fewest would not fit', () => {
    // 400, 400, 700 and 1 000 ports free: two shares of 800 or three of 534 do not fit, four of 400 do.
    const usage = new Map([['127.0.0.1', held(0, 600)], ['127.0.0.2', held(0, 600)], ['127.0.0.3', held(300)]]);
    const plan = planSourceAddresses({ clients: 1_600, clientsPerAddress: 800, candidates: 4, range, usage });
    expect(plan.addresses).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']);
    expect(plan.clientsPerAddress).toBe(400);
  });

  it('stops with what is free, what is needed, when TIME_WAIT clears and which flag helps', () => {
    const usage = new Map([['127.0.0.1', held(200, 700, 42)], ['127.0.0.2', held(0, 900, 17)]]);
    const plan = () => planSourceAddresses({ clients: 500, clientsPerAddress: 800, candidates: 2, range, usage });
    expect(plan).toThrow(SourcePortsExhaustedError);
    expect(plan).toThrow(
      '500 client connections need 500 free ephemeral ports, but 127.0.0.1 to 127.0.0.2 have 200 free (the others are open or in TIME_WAIT); ' +
        'the TIME_WAIT ports free within 42 s: wait that long, or spread the clients over more addresses with --source-addresses 4',
    );
  });

  it('stops when the ports are free in total but no even spread fits', () => {
    // 250 + 250 + 100 free: 600 ≥ 550, but the fleet deals clients evenly (a share of 184 or 275).
    const usage = new Map([['127.0.0.1', held(750)], ['127.0.0.2', held(750)], ['127.0.0.3', held(900)]]);
    expect(() => planSourceAddresses({ clients: 550, clientsPerAddress: 800, candidates: 3, range, usage })).toThrow(/have 600 free/);
  });

  it('names the one address when only one may be used', () => {
    expect(() => planSourceAddresses({ clients: 1_001, clientsPerAddress: 8_000, candidates: 1, range, usage: none })).toThrow(
      /^1001 client connections need 1001 free ephemeral ports, but 127\.0\.0\.1 has 1000 free \(the others are open or in TIME_WAIT\), or spread the clients over more addresses with --source-addresses 2$/,
    );
  });
});

describe('assignSourcePorts', () => {
  const addresses = ['127.0.0.1', '127.0.0.2'];

  it('gives every client a port of the range on its own address, no two alike on one address', () => {
    const ports = assignSourcePorts({ clients: 1_000, instances: 1, addresses, range, held: new Map() });
    expect(ports).toHaveLength(1_000);
    for (const address of addresses) {
      const own = ports.filter((_, client) => sourceAddressOf(client, 1, addresses) === address);
      expect(own).toHaveLength(500);
      expect(new Set(own).size).toBe(500);
      expect(own.every((port) => port >= range.low && port <= range.high)).toBe(true);
    }
  });

  it('deals the clients of each instance over the addresses as the workers do', () => {
    // Clients 0 and 1 go to instances 0 and 1 from 127.0.0.1; 2 and 3 from 127.0.0.2; 4 and 5 from 127.0.0.1 again.
    expect([0, 1, 2, 3, 4, 5].map((client) => sourceAddressOf(client, 2, addresses))).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.2', '127.0.0.1', '127.0.0.1']);
    expect(assignSourcePorts({ clients: 6, instances: 2, addresses, range, held: new Map() })).toEqual([50_000, 50_001, 50_000, 50_001, 50_002, 50_003]);
  });

  it('passes over the ports held on the address (open or in TIME_WAIT) and on the wildcard address', () => {
    const held = new Map([
      ['127.0.0.1', new Set([50_000, 50_002])],
      ['*', new Set([50_001])],
      ['127.0.0.2', new Set([50_003])],
    ]);
    const ports = assignSourcePorts({ clients: 6, instances: 1, addresses, range, held });
    expect(ports.filter((_, client) => client % 2 === 0)).toEqual([50_003, 50_004, 50_005]);
    expect(ports.filter((_, client) => client % 2 === 1)).toEqual([50_000, 50_002, 50_004]);
  });

  it('gives 0 (the kernel chooses) to the clients for which the range has no port left, at its last port', () => {
    const small = { low: 50_000, high: 50_002 };
    const held = new Map([['127.0.0.1', new Set([50_001])]]);
    expect(assignSourcePorts({ clients: 4, instances: 1, addresses: ['127.0.0.1'], range: small, held })).toEqual([50_000, 50_002, 0, 0]);
  });
});
