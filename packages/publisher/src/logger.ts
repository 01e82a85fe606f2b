import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { PublisherConfig } from './config/config-schema.js';

/**
 * The process's logger: JSON lines (for a log collector) or, with `logFormat` pretty — or auto
 * on a terminal — readable lines. Both are written synchronously, in order: pino's transports run
 * on a worker thread, which would lose the last lines when the server calls `process.exit` right
 * after logging that it stopped; and an asynchronous destination flushed at exit can write the
 * last line before an earlier one still in flight ("stopped" before "draining"). The publisher
 * logs little (no request logging), so a synchronous write costs nothing that shows.
 */
export function createLogger(config: Pick<PublisherConfig, 'logLevel' | 'logFormat'>, stdout: { readonly isTTY?: boolean } = process.stdout): Logger {
  const readable = config.logFormat === 'pretty' || (config.logFormat === 'auto' && stdout.isTTY === true);
  if (!readable) return pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }));
  return pino(
    { level: config.logLevel },
    pretty({ sync: true, colorize: stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
  );
}
