/**
 * `pnpm start` runs this before the publisher: it builds the live page (packages/dashboard) only
 * when the sources the page bundles changed since the build it last made, so that `pnpm start
 * --help` answers at once. The sources are told apart by a SHA-256 of their contents (not their
 * modification times, which a checkout or a copy changes), recorded after each build.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('../../../', import.meta.url));
const publisherDirectory = fileURLToPath(new URL('../', import.meta.url));

/** What the page's bundle is made of: its own code, the client and protocol code it imports, and the locked dependency versions. */
const inputs = [
  'packages/dashboard/src',
  'packages/dashboard/scripts',
  'packages/dashboard/package.json',
  'packages/client/src',
  'packages/client/examples',
  'packages/client/package.json',
  'packages/protocol/src',
  'packages/protocol/package.json',
  'pnpm-lock.yaml',
];
const stampFile = join(publisherDirectory, 'node_modules/.cache/live-page/sources.sha256');
const builtPage = join(publisherDirectory, 'page-assets/index.html');

/** The file at `path`, or every file under the folder at `path`. */
function filesAt(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const files = inputs.flatMap((input) => filesAt(join(repository, input)));
  for (const file of files.sort()) {
    hash.update(relative(repository, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const digest = sourcesDigest();
const stamp = existsSync(stampFile) ? readFileSync(stampFile, 'utf8').trim() : undefined;
if (stamp !== digest || !existsSync(builtPage)) {
  // The build script builds when imported, and throws (failing `pnpm start`) when it cannot.
  await import('../../dashboard/scripts/build.js');
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, `${digest}\n`);
}
