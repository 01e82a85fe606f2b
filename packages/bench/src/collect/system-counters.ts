import { readFileSync } from 'node:fs';

/**
 * Machine-wide counters a run reads at the start and the end of its measured window (Linux; on
 * other systems every figure is null): the hypervisor's steal time, and the kernel's count of
 * connections dropped because a listen queue was full.
 */
export interface SystemCounters {
  /** CPU time of the whole machine (clock ticks: every state of /proc/stat's `cpu` line). */
  readonly cpuTicks: number;
  /** Of which stolen by the hypervisor for other guests (`steal`). */
  readonly stealTicks: number;
  /** `TcpExt: ListenOverflows`: a SYN or ACK arrived while a listen queue was full. */
  readonly listenOverflows: number;
  /** `TcpExt: ListenDrops`: connections dropped at a listening socket (overflows included). */
  readonly listenDrops: number;
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** /proc/net/netstat holds pairs of lines: field names, then values, per protocol. */
function tcpExtension(text: string): Map<string, number> {
  const lines = text.split('\n').filter((line) => line.startsWith('TcpExt:'));
  const names = lines[0]?.split(/\s+/).slice(1) ?? [];
  const values = lines[1]?.split(/\s+/).slice(1) ?? [];
  return new Map(names.map((name, index) => [name, Number(values[index])]));
}

export function readSystemCounters(): SystemCounters | null {
  const stat = read('/proc/stat');
  const netstat = read('/proc/net/netstat');
  if (stat === undefined || netstat === undefined) return null;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user)
  const ticks = stat.split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const tcp = tcpExtension(netstat);
  return {
    cpuTicks: ticks.reduce((sum, value) => sum + value, 0),
    stealTicks: ticks[7] ?? 0,
    listenOverflows: tcp.get('ListenOverflows') ?? 0,
    listenDrops: tcp.get('ListenDrops') ?? 0,
  };
}

/** What changed between two readings: steal as a percentage of the machine's time, and the counts. */
export function systemDelta(start: SystemCounters | null, end: SystemCounters | null) {
  if (start === null || end === null) return { stealPercent: null, listenOverflows: null, listenDrops: null };
  const cpu = end.cpuTicks - start.cpuTicks;
  return {
    stealPercent: cpu <= 0 ? 0 : Math.round(((end.stealTicks - start.stealTicks) / cpu) * 1000) / 10,
    listenOverflows: end.listenOverflows - start.listenOverflows,
    listenDrops: end.listenDrops - start.listenDrops,
  };
}
