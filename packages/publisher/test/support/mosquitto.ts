import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/testing.js';
import { ServerProcess } from './server-process.js';

const mosquittoBinary = '/usr/sbin/mosquitto';
const run = promisify(execFile);

/** Whether something accepts TCP connections on the port now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A private Mosquitto broker on its own port, which a test can kill and start again on the same
 * port (the shared broker on 1883 must not be disturbed). Call `close()` in `afterAll`.
 */
export class PrivateMosquitto {
  readonly #process = new ServerProcess('mosquitto');

  private constructor(
    readonly port: number,
    readonly directory: string,
  ) {}

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** With `users`, the broker accepts only those (name → password), from a mosquitto_passwd file. */
  static async start(users?: Readonly<Record<string, string>>): Promise<PrivateMosquitto> {
    const directory = await mkdtemp(join(tmpdir(), 'mosquitto-'));
    const broker = new PrivateMosquitto(await freePort(), directory);
    const config = join(directory, 'mosquitto.conf');
    let access = 'allow_anonymous true\n';
    if (users !== undefined) {
      const passwords = join(directory, 'passwords');
      await writeFile(passwords, '');
      for (const [user, password] of Object.entries(users)) await run('/usr/bin/mosquitto_passwd', ['-b', passwords, user, password]);
      // Started as root, mosquitto drops to its own user, which must be able to read the file.
      await chmod(directory, 0o755);
      await chmod(passwords, 0o644);
      access = `allow_anonymous false\npassword_file ${passwords}\n`;
    }
    await writeFile(config, `listener ${broker.port} 127.0.0.1\n${access}persistence false\nlog_dest stderr\n`);
    await broker.restart();
    return broker;
  }

  /** Starts the broker (again) and resolves once its port accepts connections. */
  restart(): Promise<void> {
    return this.#process.start(mosquittoBinary, ['-c', join(this.directory, 'mosquitto.conf')], () => accepts(this.port), 10_000);
  }

  /** Kills the broker at once, as a crash would, and resolves once it has exited. */
  kill(): Promise<void> {
    return this.#process.kill();
  }

  async close(): Promise<void> {
    await this.kill();
    await rm(this.directory, { recursive: true, force: true });
  }
}
