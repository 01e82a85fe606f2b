import { connect } from 'node:net';

/** How long one INFO may take before it is given up (ms). */
export const REDIS_INFO_TIMEOUT_MS = 5_000;

/** What the bench reports of a Redis or Valkey server. */
export interface RedisInfo {
  /** `process_id`: its pid on its own machine. */
  readonly pid: number | null;
  /** `used_memory`: bytes its allocator holds for data (the streams' logs, their indexes, the clients' buffers). */
  readonly usedMemoryBytes: number | null;
  readonly usedMemoryPeakBytes: number | null;
}

/** Parses the text of `INFO` (`# Section` headers, `name:value` lines) into its fields. */
export function parseRedisInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

export function redisInfo(fields: ReadonlyMap<string, string>): RedisInfo {
  const count = (name: string) => {
    const value = Number(fields.get(name));
    return fields.has(name) && Number.isInteger(value) && value >= 0 ? value : null;
  };
  return { pid: count('process_id'), usedMemoryBytes: count('used_memory'), usedMemoryPeakBytes: count('used_memory_peak') };
}

/** A command as a RESP array of bulk strings. */
const command = (...words: string[]) => `*${words.length}\r\n${words.map((word) => `$${Buffer.byteLength(word)}\r\n${word}\r\n`).join('')}`;

/**
 * Asks the server at `url` (`redis://[[user]:password@]host[:port]`, no TLS) for `INFO server
 * memory` on a connection of its own; rejects if it refuses or does not answer in time.
 */
export function readRedisInfo(url: string): Promise<RedisInfo> {
  const target = new URL(url);
  const password = decodeURIComponent(target.password);
  const user = decodeURIComponent(target.username);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port || 6379), target.hostname.replace(/^\[|\]$/g, ''));
    socket.setTimeout(REDIS_INFO_TIMEOUT_MS, () => socket.destroy(new Error(`${target.host} did not answer INFO within ${REDIS_INFO_TIMEOUT_MS} ms`)));
    let answer = Buffer.alloc(0);
    socket.once('connect', () => socket.write(`${password === '' ? '' : user === '' ? command('AUTH', password) : command('AUTH', user, password)}${command('INFO', 'server', 'memory')}`));
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const text = answer.toString('latin1');
      const failure = /^-(.*)\r\n/m.exec(text);
      if (failure) return socket.destroy(new Error(`${target.host} refused INFO: ${failure[1]}`));
      const bulk = /\$(\d+)\r\n/.exec(text);
      if (bulk === null) return;
      const start = bulk.index + bulk[0].length;
      const length = Number(bulk[1]);
      if (answer.length < start + length) return;
      socket.end();
      resolve(redisInfo(parseRedisInfo(answer.subarray(start, start + length).toString('utf8'))));
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`${target.host} closed the connection before answering INFO`)));
  });
}
