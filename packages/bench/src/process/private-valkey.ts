import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot } from './publisher-process.js';

const run = promisify(execFile);

/** When Valkey writes its append-only file to disk (`appendfsync`). */
export type Appendfsync = 'always' | 'everysec' | 'no';
export const appendfsyncPolicies: readonly Appendfsync[] = ['always', 'everysec', 'no'];

/**
 * A Valkey server of the bench's own (scripts/valkey.sh): its port, a fresh temporary directory,
 * its append-only file on. Never the machine's shared server on 6379. `stop()` removes its data.
 */
export class PrivateValkey {
  private constructor(
    readonly port: number,
    readonly pid: number,
    readonly appendfsync: Appendfsync,
    readonly directory: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Resolves once the server answers PING; rejects with its log's end if it does not start. */
  static async start(port: number, appendfsync: Appendfsync): Promise<PrivateValkey> {
    const directory = mkdtempSync(join(tmpdir(), 'bench-valkey-'));
    try {
      const { stdout } = await run('bash', [`${repositoryRoot}scripts/valkey.sh`, 'start', String(port), directory, appendfsync]);
      return new PrivateValkey(port, Number(stdout.trim()), appendfsync, directory);
    } catch (error) {
      rmSync(directory, { recursive: true, force: true });
      throw new Error(`the bench's Valkey did not start on ${port}: ${(error as { stderr?: string }).stderr?.trim() ?? String(error)}`, { cause: error });
    }
  }

  async stop(): Promise<void> {
    await run('bash', [`${repositoryRoot}scripts/valkey.sh`, 'stop', join(this.directory, 'valkey.pid')]).catch(() => undefined);
    rmSync(this.directory, { recursive: true, force: true });
  }
}
