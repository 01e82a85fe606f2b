/**
 * What the built live page was made from: a SHA-256 of the sources it bundles, recorded by every
 * build of `scripts/build.ts` (`pnpm build`, the publisher's prepack), so that the publisher's
 * `pnpm start` rebuilds the page only when one of them changed. The sources are told apart by
 * their contents, not their modification times, which a checkout or a copy changes.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultOutputDirectory } from '../src/index.js';

const repository = fileURLToPath(new URL('../../../', import.meta.url));

/** What the page's bundle and the client's browser file are made of: their own code, the client and protocol code they import, and the locked dependency versions. */
const inputs = [
  'packages/dashboard/src',
  'packages/dashboard/scripts',
  'packages/dashboard/package.json',
  'packages/client/src',
  'packages/client/scripts/build-browser-file.ts',
  'packages/client/examples',
  'packages/client/package.json',
  'packages/protocol/src',
  'packages/protocol/package.json',
  'pnpm-lock.yaml',
];
/** Beside the publisher's page-assets/ (every file in which is served), in its node_modules cache. */
const stampFile = join(defaultOutputDirectory, '..', 'node_modules/.cache/live-page/sources.sha256');

/** The file at `path`, or every file under the folder at `path`. */
function filesAt(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The digest of the page's sources as they are now. */
export function pageSourcesDigest(): string {
  const hash = createHash('sha256');
  const files = inputs.flatMap((input) => filesAt(join(repository, input)));
  for (const file of files.sort()) {
    hash.update(relative(repository, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Records that the page in the publisher's folder was built from sources of `digest`. */
export function recordPageBuild(digest: string): void {
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, `${digest}\n`);
}

/** Whether the page in the publisher's folder was built from sources of `digest`. */
export function pageBuiltFrom(digest: string): boolean {
  if (!existsSync(join(defaultOutputDirectory, 'index.html')) || !existsSync(stampFile)) return false;
  return readFileSync(stampFile, 'utf8').trim() === digest;
}
