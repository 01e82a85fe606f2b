import { describe, expect, it } from 'vitest';
import { heldPorts, parsePortRange, parseProcNetTcp, portUsage, readPortRange, readPortUsage } from '../../../src/collect/port-usage.js';

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const line = (local: string, state: string, timer = '00:00000000', queues = '00000000:00000000', remote = '0100007F:4A04') =>
  `   0: ${local} ${remote} ${state} ${queues} ${timer} 00000000  1000        0 0 1 0000000000000000 20 4 30 10 -1`;
const unqueued = { sendQueueBytes: 0, receiveQueueBytes: 0 };

describe('parseProcNetTcp', () => {
  it('reads the local address and port, and how long a TIME_WAIT socket still holds its port', () => {
    const text = [HEADER, line('0100007F:8000', '01'), line('0200007F:8001', '06', '03:00000BB8'), line('00000000:8002', '0A'), ''].join('\n');
    expect(parseProcNetTcp(text)).toEqual([
      { address: '127.0.0.1', port: 0x8000, remotePort: 0x4a04, established: true, timeWait: false, expiresInSeconds: 0, ...unqueued },
      // 3000 clock ticks of 10 ms: 30 s.
      { address: '127.0.0.2', port: 0x8001, remotePort: 0x4a04, established: false, timeWait: true, expiresInSeconds: 30, ...unqueued },
      { address: '*', port: 0x8002, remotePort: 0x4a04, established: false, timeWait: false, expiresInSeconds: 0, ...unqueued },
    ]);
  });

  it("reads the other end's port and the bytes the kernel holds each way", () => {
    const text = [HEADER, line('0100007F:8000', '01', undefined, '00010000:000004D2', '0100007F:D431'), line('00000000:4A04', '0A', undefined, undefined, '00000000:0000')].join('\n');
    expect(parseProcNetTcp(text).map(({ port, remotePort, sendQueueBytes, receiveQueueBytes }) => ({ port, remotePort, sendQueueBytes, receiveQueueBytes }))).toEqual([
      { port: 0x8000, remotePort: 0xd431, sendQueueBytes: 65_536, receiveQueueBytes: 1_234 },
      { port: 0x4a04, remotePort: 0, sendQueueBytes: 0, receiveQueueBytes: 0 },
    ]);
  });

  it('reads IPv4-mapped IPv6 addresses as IPv4, and the IPv6 wildcard as the wildcard', () => {
    const text = [HEADER, line('0000000000000000FFFF00000300007F:8000', '01'), line('00000000000000000000000000000000:8001', '0A'), line('00000000000000000000000001000000:8002', '0A')].join('\n');
    expect(parseProcNetTcp(text).map((entry) => entry.address)).toEqual(['127.0.0.3', '*', 'ipv6:00000000000000000000000001000000']);
  });

  it('skips lines it cannot read', () => {
    expect(parseProcNetTcp(`${HEADER}\n   0: nonsense\n\n`)).toEqual([]);
  });
});

describe('heldPorts', () => {
  it('lists the ports of the range each address holds, open or in TIME_WAIT, the wildcard as `*`', () => {
    const held = heldPorts(
      [
        { address: '127.0.0.1', port: 40_000, timeWait: false, expiresInSeconds: 0 },
        { address: '127.0.0.1', port: 40_000, timeWait: false, expiresInSeconds: 0 },
        { address: '127.0.0.1', port: 40_001, timeWait: true, expiresInSeconds: 12 },
        { address: '127.0.0.2', port: 18_900, timeWait: false, expiresInSeconds: 0 },
        { address: '*', port: 40_099, timeWait: false, expiresInSeconds: 0 },
      ],
      { low: 40_000, high: 40_099 },
    );
    expect(held).toEqual(
      new Map([
        ['127.0.0.1', new Set([40_000, 40_001])],
        ['*', new Set([40_099])],
      ]),
    );
  });
});

describe('portUsage', () => {
  const range = { low: 40_000, high: 40_099 };
  it('counts open and TIME_WAIT ports of the range per address, each port once, with the latest TIME_WAIT expiry', () => {
    const usage = portUsage(
      [
        { address: '127.0.0.1', port: 40_000, timeWait: false, expiresInSeconds: 0 },
        { address: '127.0.0.1', port: 40_000, timeWait: false, expiresInSeconds: 0 },
        { address: '127.0.0.1', port: 40_001, timeWait: true, expiresInSeconds: 12 },
        { address: '127.0.0.1', port: 40_002, timeWait: true, expiresInSeconds: 55 },
        { address: '127.0.0.1', port: 18_900, timeWait: false, expiresInSeconds: 0 },
        { address: '*', port: 40_050, timeWait: false, expiresInSeconds: 0 },
      ],
      range,
    );
    expect(Object.fromEntries(usage)).toEqual({
      '127.0.0.1': { inUse: 1, timeWait: 2, timeWaitClearsInSeconds: 55 },
      '*': { inUse: 1, timeWait: 0, timeWaitClearsInSeconds: 0 },
    });
  });
});

describe('parsePortRange', () => {
  it('reads ip_local_port_range, and nothing from a malformed one', () => {
    expect(parsePortRange('32768\t60999\n')).toEqual({ low: 32_768, high: 60_999 });
    expect(parsePortRange('60999 32768')).toBeUndefined();
    expect(parsePortRange('')).toBeUndefined();
  });
});

describe('readPortUsage (Linux)', () => {
  it('sees a socket this process holds on an ephemeral port', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const range = readPortRange();
      expect(port).toBeGreaterThanOrEqual(range.low);
      expect(readPortUsage(range).get('127.0.0.1')?.inUse).toBeGreaterThanOrEqual(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
