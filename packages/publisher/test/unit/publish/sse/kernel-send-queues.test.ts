import { describe, expect, it, vi } from 'vitest';
import { connectionKey, parseProcNetTcp, ProcNetTcpSendQueues } from '../../../../src/publish/sse/kernel-send-queues.js';

// Lines as Linux 6.x prints them (trailing fields shortened).
const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C5A2 01 0002A1C0:00000000 01:00000014 00000000     0        0 2 1 0 20 4 30 10 -1
10000: 0100007F:1F90 0100007F:C5A3 01 00000010:00000000 00:00000000 00000000     0        0 3 1 0 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:1F90 0000000000000000FFFF00000100007F:D90E 01 00001000:00000000 00:00000000 00000000     0        0 4 1 0 20 4 30 10 -1
`;

describe('parseProcNetTcp', () => {
  it('reads every connection of a /proc/net/tcp{,6} table with its tx_queue, whatever the width of sl', () => {
    const found = new Map<string, number>();
    parseProcNetTcp(TCP, (key, bytes) => found.set(key, bytes));
    parseProcNetTcp(TCP6, (key, bytes) => found.set(key, bytes));
    expect(found.get(connectionKey({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '127.0.0.1', remotePort: 0xc5a2 }) as string)).toBe(0x2a1c0);
    expect(found.get(connectionKey({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '127.0.0.1', remotePort: 0xc5a3 }) as string)).toBe(16);
    expect(found.get(connectionKey({ localAddress: '::ffff:127.0.0.1', localPort: 8080, remoteAddress: '::ffff:127.0.0.1', remotePort: 0xd90e }) as string)).toBe(0x1000);
    expect(found.size).toBe(4);
  });

  it('reads nothing from a table with no connection (the header alone)', () => {
    const found = vi.fn();
    parseProcNetTcp(TCP.split('\n')[0] as string, found);
    parseProcNetTcp('', found);
    expect(found).not.toHaveBeenCalled();
  });
});

describe('connectionKey', () => {
  it('writes IPv4, IPv6 and IPv4-mapped addresses as the kernel prints them', () => {
    expect(connectionKey({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '10.1.2.3', remotePort: 443 })).toBe('0100007F:1F90 0302010A:01BB');
    expect(connectionKey({ localAddress: '::1', localPort: 1, remoteAddress: '2001:db8::ff00:42:8329', remotePort: 65535 })).toBe(
      '00000000000000000000000001000000:0001 B80D01200000000000FF000029834200:FFFF',
    );
  });

  it('is undefined for a socket whose ends are unknown (not connected, closed) or unreadable', () => {
    expect(connectionKey({ localAddress: '127.0.0.1', localPort: 8080 })).toBeUndefined();
    expect(connectionKey({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: 'nonsense', remotePort: 1 })).toBeUndefined();
    expect(connectionKey({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '::1', remotePort: 1 })).toBeUndefined();
  });
});

describe('ProcNetTcpSendQueues (Linux)', () => {
  it('finds nothing, and says so, where the tables do not exist', async () => {
    const found = vi.fn();
    expect(await new ProcNetTcpSendQueues(['/nonexistent/tcp']).snapshot(found)).toBe(false);
    expect(found).not.toHaveBeenCalled();
  });
});
