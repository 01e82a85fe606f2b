import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, chmodSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HEARTBEAT_MS } from '../scenario/bench-options.js';

const run = promisify(execFile);

/** Where Debian's libnginx-mod-nchan puts the module; `RDF_STREAM_BENCH_NCHAN_MODULE` names another. */
export const NCHAN_MODULE_ENV = 'RDF_STREAM_BENCH_NCHAN_MODULE';
export const DEFAULT_NCHAN_MODULE = '/usr/lib/nginx/modules/ngx_nchan_module.so';
/** Where the peer's nginx binary is looked for, in this order (Debian puts it in /usr/sbin, not always on PATH). */
const NGINX_CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'];

/** The subscriber path: the publisher's own (`{stream}/events`), so that the fleet's clients go to either unchanged. */
export const NCHAN_STREAM_PATH = '/streams/parking';
const PUBLISH_PATH = '/pub';
/** Messages nchan keeps on the channel: a few, as the subscribers only ever want the newest. */
const MESSAGE_BUFFER_LENGTH = 16;
/**
 * nginx connections per subscriber: with one each, a 10 000-subscriber fleet found them "not
 * enough" (the error log) and nginx closed connections whose request it had not read yet, which
 * the clients saw as errors. The structures are preallocated, a few hundred bytes each.
 */
const CONNECTIONS_PER_SUBSCRIBER = 2;
/** Connections nginx needs besides the subscribers': its listener, the relay's publisher connection. */
const SPARE_CONNECTIONS = 256;
/** How long the peer may take to accept connections (ms). */
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;

/** What the peer needs and this machine lacks: nginx or the nchan module, with the Debian package that brings it. */
export function nchanMissing(): string | undefined {
  const nginx = nginxBinary();
  const module = nchanModulePath();
  const missing = [
    ...(nginx === undefined ? ['nginx (Debian package nginx)'] : []),
    ...(existsSync(module) ? [] : [`the nchan module ${module} (Debian package libnginx-mod-nchan)`]),
  ];
  return missing.length === 0 ? undefined : `--peer nchan needs ${missing.join(' and ')}: apt-get install -y nginx libnginx-mod-nchan`;
}

function nginxBinary(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(':').filter(Boolean).map((dir) => join(dir, 'nginx'));
  return [...onPath, ...NGINX_CANDIDATES].find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const nchanModulePath = () => process.env[NCHAN_MODULE_ENV] || DEFAULT_NCHAN_MODULE;

/** The hard limit of open files this process may raise nginx's worker to (`/proc/self/limits`); 20 000 when unreadable. */
function openFilesHardLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((row) => row.startsWith('Max open files'));
    const hard = line?.trim().split(/\s+/)[4];
    return hard === undefined || hard === 'unlimited' ? 1_048_576 : Number(hard);
  } catch {
    return 20_000;
  }
}

/**
 * The configuration of the peer: one worker, an nchan channel `parking` published by POST on
 * `/pub` and read as EventSource on the publisher's own events path; subscribers get only what
 * is published after they connect (as the publisher's SSE subscribers without `Last-Event-ID`),
 * never time out, and are pinged (`event: ping`) as often as the publisher writes its heartbeat,
 * as a deployment behind proxies would have it. Everything nginx writes stays in `dir`.
 */
export function nchanConfig(options: {
  readonly dir: string;
  readonly port: number;
  readonly module: string;
  readonly connections: number;
  readonly openFiles: number;
  /** Seconds between two pings (`event: ping`) to every subscriber: the publisher's heartbeat's. */
  readonly pingSeconds: number;
}): string {
  const { dir } = options;
  return `load_module ${options.module};
worker_processes 1;
worker_rlimit_nofile ${options.openFiles};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
daemon off;
events {
  worker_connections ${options.connections};
  multi_accept on;
}
http {
  access_log off;
  client_body_temp_path ${dir}/client-body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${options.port} backlog=4096;
    location = ${PUBLISH_PATH} {
      nchan_publisher;
      nchan_channel_id parking;
      nchan_message_buffer_length ${MESSAGE_BUFFER_LENGTH};
      nchan_message_timeout 1h;
      client_max_body_size 1m;
      client_body_buffer_size 1m;
    }
    location = ${NCHAN_STREAM_PATH}/events {
      nchan_subscriber eventsource;
      nchan_channel_id parking;
      nchan_subscriber_first_message newest;
      nchan_subscriber_timeout 0;
      nchan_eventsource_ping_interval ${options.pingSeconds};
    }
  }
}
`;
}

/**
 * nginx with the nchan module, of the bench's own: one worker, a fresh temporary directory, a
 * port on 127.0.0.1, the configuration `nchanConfig` writes. `stop()` ends it and removes the
 * directory. The worker's pid is what the run samples: the master only supervises it.
 */
export class PrivateNchan {
  readonly #master: ChildProcess;

  private constructor(
    readonly port: number,
    readonly workerPid: number,
    readonly directory: string,
    master: ChildProcess,
  ) {
    this.#master = master;
  }

  /** The stream URL the fleet is given: its events resource is nchan's subscriber location. */
  get streamUrl(): string {
    return `http://127.0.0.1:${this.port}${NCHAN_STREAM_PATH}`;
  }

  get publishUrl(): string {
    return `http://127.0.0.1:${this.port}${PUBLISH_PATH}`;
  }

  /** Resolves once nginx accepts connections; rejects, with its error log's end, if it does not start. */
  static async start(port: number, subscribers: number): Promise<PrivateNchan> {
    const missing = nchanMissing();
    if (missing !== undefined) throw new Error(missing);
    const directory = mkdtempSync(join(tmpdir(), 'bench-nchan-'));
    // Started as root, nginx's worker runs as an unprivileged user: the directory must be traversable.
    chmodSync(directory, 0o755);
    const openFiles = openFilesHardLimit();
    const configFile = join(directory, 'nginx.conf');
    writeFileSync(
      configFile,
      nchanConfig({
        dir: directory,
        port,
        module: nchanModulePath(),
        // No more than its open files: nginx warns beyond, and could not use them anyway.
        connections: Math.min(subscribers * CONNECTIONS_PER_SUBSCRIBER + SPARE_CONNECTIONS, openFiles),
        openFiles,
        pingSeconds: Math.round(HEARTBEAT_MS / 1000),
      }),
    );
    const master = spawn(nginxBinary()!, ['-p', directory, '-c', configFile, '-e', join(directory, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    master.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const fail = (why: string): never => {
      const log = existsSync(join(directory, 'error.log')) ? readFileSync(join(directory, 'error.log'), 'utf8') : '';
      master.kill('SIGKILL');
      rmSync(directory, { recursive: true, force: true });
      throw new Error(`the bench's nginx + nchan did not start on ${port}: ${why}\n${`${stderr}${log}`.trim().split('\n').slice(-5).join('\n')}`);
    };
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (master.exitCode !== null) fail(`nginx exited with ${master.exitCode}`);
      if (await accepts(port)) break;
      if (Date.now() > deadline) fail(`not listening after ${START_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const workers = await run('pgrep', ['-P', String(master.pid)]).then(
      ({ stdout }) => stdout.trim().split('\n').filter(Boolean).map(Number),
      () => [] as number[],
    );
    if (workers.length !== 1) fail(`expected one worker process, found ${workers.length}`);
    return new PrivateNchan(port, workers[0]!, directory, master);
  }

  /** Publishes one message on the channel; resolves when nchan has taken it (201 or 202). */
  async publish(body: string): Promise<void> {
    const response = await fetch(this.publishUrl, { method: 'POST', body, headers: { 'content-type': 'text/turtle' } });
    await response.arrayBuffer();
    if (response.status !== 201 && response.status !== 202) throw new Error(`nchan refused a message: ${response.status}`);
  }

  /**
   * Fast shutdown (SIGTERM: the open event streams do not hold it), SIGKILL if it lingers; removes
   * the directory, after copying nginx's error log into `keepLogIn` (as `nchan-error.log`) when
   * it is not empty.
   */
  async stop(keepLogIn?: string): Promise<void> {
    if (this.#master.exitCode === null && this.#master.signalCode === null) {
      const exited = once(this.#master, 'exit');
      this.#master.kill('SIGTERM');
      const timer = setTimeout(() => {
        this.#master.kill('SIGKILL');
        // The worker outlives a killed master: it is ended too.
        try {
          process.kill(this.workerPid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    const log = join(this.directory, 'error.log');
    if (keepLogIn !== undefined && existsSync(log) && statSync(log).size > 0) {
      mkdirSync(keepLogIn, { recursive: true });
      copyFileSync(log, join(keepLogIn, 'nchan-error.log'));
    }
    rmSync(this.directory, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
