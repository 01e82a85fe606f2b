/**
 * `pnpm start` runs this before the publisher: it builds the live page (packages/dashboard) only
 * when the sources the page bundles changed since the last build recorded them (every build of
 * the dashboard's `scripts/build.ts` does: `pnpm build`, prepack, or this), so that `pnpm start
 * --help` answers at once.
 */
import { pageBuiltFrom, pageSourcesDigest } from '../../dashboard/scripts/page-sources.js';

if (!pageBuiltFrom(pageSourcesDigest())) {
  // The build script builds when imported, records what it built from, and throws (failing
  // `pnpm start`) when it cannot.
  await import('../../dashboard/scripts/build.js');
}
