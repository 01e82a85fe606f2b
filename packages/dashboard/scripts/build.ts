import { buildPage } from '../src/index.js';
import { pageSourcesDigest, recordPageBuild } from './page-sources.js';

/** `pnpm build` here, and the publisher's `pnpm start`: bundles the live page into the publisher's folder. */
const startedAt = performance.now();
// Before building: a source changed during the build leaves a digest that no longer matches.
const digest = pageSourcesDigest();
const built = await buildPage();
recordPageBuild(digest);
const total = built.files.reduce((sum, file) => sum + file.bytes, 0);
const compressed = built.files.reduce((sum, file) => sum + file.brotliBytes, 0);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(
  `live page built in ${Math.round(performance.now() - startedAt)} ms: ${built.files.length} files, ${kib(total)} (${kib(compressed)} brotli) in ${built.outputDirectory}`,
);
