import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * Starts the publisher CLI as its own process (node itself, with tsx's loader: the child's pid is
 * the publisher's, so that its CPU and memory can be read from /proc); resolves once it listens.
 */
export async function spawnPublisher(args: readonly string[], nodeArgs: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/cli.ts', ...args], {
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
