/**
 * `pnpm start` (at the root and in this package): builds the live page (packages/dashboard) only
 * when the sources the page bundles changed since the last build recorded them (every build of
 * the dashboard's `scripts/build.ts` does: `pnpm build`, prepack, or this), then runs the
 * publisher's command line in the same process: one Node start and one TypeScript loader (tsx)
 * instead of a pnpm, a Node and a tsx for each step, which was seconds of a restart after a crash.
 * The arguments are the command line's (`pnpm start --port 9000`).
 */
import { pageBuiltFrom, pageSourcesDigest } from '../../dashboard/scripts/page-sources.js';

if (!pageBuiltFrom(pageSourcesDigest())) {
  // The build script builds when imported, records what it built from, and throws (failing
  // `pnpm start`) when it cannot.
  await import('../../dashboard/scripts/build.js');
}
await import('../src/cli.js');
