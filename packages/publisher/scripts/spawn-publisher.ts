import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** Starts the publisher CLI as its own process; resolves once it listens. */
export async function spawnPublisher(args: readonly string[]): Promise<ChildProcess> {
  const child = spawn(fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url)), ['src/cli.ts', ...args], {
    cwd: packageDir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes('"msg":"publishing')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`publisher exited with ${code}: ${seen}`)));
  });
  return child;
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
