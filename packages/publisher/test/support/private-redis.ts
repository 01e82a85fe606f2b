import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/testing.js';
import { ServerProcess } from './server-process.js';

/** Valkey 8 (Debian bookworm-backports): the server the shared log is tested against. */
export const VALKEY_SERVER = '/usr/bin/valkey-server';
/** Debian bookworm's Redis 7.0: older than 7.2, without WAITAOF, which the publisher must refuse. */
export const REDIS_7_0_SERVER = '/usr/bin/redis-server';

export interface PrivateRedisOptions {
  /** The server program (default: Valkey). */
  readonly binary?: string;
  /** `requirepass`: clients must authenticate with it. */
  readonly password?: string;
  /** `appendfsync`: `always` (default: every write on disk before its reply) or `everysec`. */
  readonly appendfsync?: 'always' | 'everysec';
}

/** Answers `+PONG` to an inline PING once the server has loaded its data (not `-LOADING`). */
function pong(port: number, password: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${password === undefined ? '' : `AUTH ${password}\r\n`}PING\r\n`));
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('+PONG') || answer.includes('-')) {
        socket.destroy();
        resolve(answer.includes('+PONG'));
      }
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A private Redis or Valkey server on its own port and data directory, with its append-only file
 * on (the shared log's durability is what is under test), which a test can kill and start again
 * on the same port — with its data, or empty. Never the machine's shared server on 6379. Call
 * `close()` in `afterAll`.
 */
export class PrivateRedis {
  readonly #process = new ServerProcess('redis');

  private constructor(
    readonly port: number,
    readonly directory: string,
    readonly options: PrivateRedisOptions,
  ) {}

  /** `redis://[:password@]127.0.0.1:port`. */
  get url(): string {
    return `redis://${this.options.password === undefined ? '' : `:${encodeURIComponent(this.options.password)}@`}127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.#process.running;
  }

  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const server = new PrivateRedis(await freePort(), await mkdtemp(join(tmpdir(), 'redis-')), options);
    await server.restart();
    return server;
  }

  /** Starts the server (again) on its port and directory; resolves once it answers PING with its data loaded. */
  async restart(): Promise<void> {
    const { binary = VALKEY_SERVER, password, appendfsync = 'always' } = this.options;
    const args = [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.directory,
      '--appendonly', 'yes', '--appendfsync', appendfsync, '--save', '', '--daemonize', 'no', '--logfile', '',
      ...(password === undefined ? [] : ['--requirepass', password]),
    ];
    await this.#process.start(binary, args, () => pong(this.port, password), 15_000);
  }

  /** Kills the server at once (`SIGKILL`, as a crash would), keeping its data directory. */
  kill(): Promise<void> {
    return this.#process.kill();
  }

  /** Kills the server and empties its data directory: it comes back as a new Redis would, knowing nothing. */
  async wipe(): Promise<void> {
    await this.kill();
    await rm(this.directory, { recursive: true, force: true });
    await mkdir(this.directory);
  }

  async close(): Promise<void> {
    await this.kill();
    await rm(this.directory, { recursive: true, force: true });
  }
}
