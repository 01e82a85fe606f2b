import { createClient, RESP_TYPES } from '@redis/client';
import type { Logger } from '../../clock-and-logger.js';
import { LogOpenError } from '../event-log.js';

/** A connection to the shared log's server, replies as Buffers (RESP2: arrays, never maps). */
export type RedisConnection = ReturnType<typeof bufferClient>;

/** Least Redis (or Valkey, which reports the Redis version it is compatible with) the log needs: WAITAOF. */
const LEAST_VERSION = [7, 2] as const;
/** Milliseconds a connection attempt may take. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Longest pause between two reconnection attempts (milliseconds). */
const MAX_RECONNECT_DELAY_MS = 1_000;

function bufferClient(url: string, onceConnected: () => boolean) {
  return createClient({
    url,
    RESP: 2,
    // While the server is unreachable a command fails at once (ingest answers 503) instead of
    // waiting in an unbounded queue for a server that may not come back.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Before the first connection an error is final (start-up reports it and exits); after,
      // reconnect for ever, backing off up to MAX_RECONNECT_DELAY_MS.
      reconnectStrategy: (retries, cause) => (onceConnected() ? Math.min(50 * 2 ** Math.min(retries, 6), MAX_RECONNECT_DELAY_MS) : cause),
    },
  }).withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
}

/** `url` without its password, for messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/**
 * Connects to the server of the shared logs and checks, before anything is served, that it can
 * keep them: it answers, accepts the credentials, is Redis or Valkey 7.2 or later (`WAITAOF`, by
 * which an append is acknowledged only once it is on disk) and has its append-only file on.
 * Throws `LogOpenError` (exit status 2) with what to change otherwise.
 *
 * The connection reconnects by itself after it is lost, and fails commands at once meanwhile.
 */
export async function connectRedis(url: string, logger: Logger): Promise<RedisConnection> {
  const shown = redactedUrl(url);
  let connected = false;
  const client = bufferClient(url, () => connected);
  let lastError: Error | undefined;
  client.on('error', (error: Error) => {
    lastError = error;
    if (connected) logger.warn({ err: error, redis: shown }, 'the shared log server is unreachable');
  });
  client.on('ready', () => {
    if (connected) logger.info({ redis: shown }, 'the shared log server is reachable again');
  });
  try {
    await client.connect();
  } catch (error) {
    const cause = (error as Error | undefined) ?? lastError;
    const message = String(cause?.message ?? cause);
    if (/WRONGPASS|NOAUTH|invalid password|AUTH/i.test(message)) {
      throw new LogOpenError(
        `the shared log's server at ${shown} refused the credentials (${message}): give its user and password in --redis-url (redis://user:password@host:port)`,
      );
    }
    throw new LogOpenError(
      `cannot reach the shared log's server at ${shown} (${(cause as NodeJS.ErrnoException | undefined)?.code ?? /\bE[A-Z]{3,}\b/.exec(message)?.[0] ?? message}): start Redis or Valkey 7.2 or later there, or set --redis-url`,
    );
  }
  connected = true;
  try {
    await checkServer(client, shown);
  } catch (error) {
    client.destroy();
    throw error;
  }
  return client;
}

async function checkServer(client: RedisConnection, shown: string): Promise<void> {
  const info = String(await client.sendCommand(['INFO', 'server']));
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  const version = field('redis_version') ?? '0';
  const valkey = field('valkey_version');
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const product = valkey === undefined ? `Redis ${version}` : `Valkey ${valkey}`;
  if (major < LEAST_VERSION[0] || (major === LEAST_VERSION[0] && minor < LEAST_VERSION[1])) {
    throw new LogOpenError(
      `the shared log's server at ${shown} is ${product}; the publisher needs Redis or Valkey ${LEAST_VERSION.join('.')} or later (WAITAOF: an element is acknowledged only once it is on disk)`,
    );
  }
  try {
    // Returns at once when the append-only file is on (nothing written yet on this connection).
    await client.sendCommand(['WAITAOF', '1', '0', '1000']);
  } catch (error) {
    const message = (error as Error).message;
    if (/appendonly/i.test(message)) {
      throw new LogOpenError(
        `the shared log's server at ${shown} (${product}) has its append-only file off: acknowledged elements would not survive its restart; turn it on (appendonly yes in its configuration, or CONFIG SET appendonly yes)`,
      );
    }
    throw new LogOpenError(`the shared log's server at ${shown} (${product}) refused WAITAOF: ${message}`);
  }
}
