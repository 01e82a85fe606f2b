import { describe, expect, it } from 'vitest';
import { pageSizeBytes, parseSockstat, readSockstat } from '../../../src/collect/sockstat.js';

const SOCKSTAT = `sockets: used 20074
TCP: inuse 20014 orphan 0 tw 1867 alloc 20017 mem 126
UDP: inuse 0 mem 0
UDPLITE: inuse 0
RAW: inuse 0
FRAG: inuse 0 memory 0
`;

describe('parseSockstat', () => {
  it('reads the TCP sockets in use and the pages of their buffers, not UDP\'s', () => {
    expect(parseSockstat(SOCKSTAT)).toEqual({ inUse: 20_014, memPages: 126 });
  });

  it('finds the fields by name, in any order', () => {
    expect(parseSockstat('TCP: mem 7 alloc 3 inuse 2\n')).toEqual({ inUse: 2, memPages: 7 });
  });

  it('is null without a TCP line, or when a figure is missing or not a count', () => {
    expect(parseSockstat('sockets: used 3\nUDP: inuse 0 mem 0\n')).toBeNull();
    expect(parseSockstat('TCP: inuse 3 orphan 0 tw 0 alloc 3\n')).toBeNull();
    expect(parseSockstat('TCP: inuse 3 mem x\n')).toBeNull();
    expect(parseSockstat('TCP: inuse -1 mem 2\n')).toBeNull();
    expect(parseSockstat('')).toBeNull();
  });
});

describe('readSockstat and pageSizeBytes (Linux)', () => {
  it('reads this machine\'s figures: at least the sockets open now', () => {
    const tcp = readSockstat();
    expect(tcp).not.toBeNull();
    expect(tcp!.inUse).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(tcp!.memPages)).toBe(true);
  });

  it('gives the page size getconf reports, a power of two', () => {
    const page = pageSizeBytes();
    expect(page).toBeGreaterThanOrEqual(4096);
    expect(page & (page - 1)).toBe(0);
  });
});
