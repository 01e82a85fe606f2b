#!/usr/bin/env node
import type { PublisherConfig } from './config/config-schema.js';
import { ConfigError, ConfigHelp, loadConfig } from './config/load-config.js';

/** Exit status of a configuration that must change (a value, a file it names, the data directory). */
const EXIT_CONFIGURATION = 2;

let config: PublisherConfig;
try {
  // `pnpm start` runs in packages/publisher: paths given on the command line are relative to
  // where the user typed it (pnpm's INIT_CWD).
  config = loadConfig({ argv: process.argv.slice(2), env: process.env, cwd: process.env.INIT_CWD ?? process.cwd() });
} catch (error) {
  if (error instanceof ConfigHelp) {
    process.stdout.write(error.output);
    process.exit(0);
  }
  if (error instanceof ConfigError) fail(EXIT_CONFIGURATION, error.message);
  throw error;
}

// The server's modules (Fastify, the RDF libraries) load only once there is something to serve,
// so that --help, --version and a configuration error answer at once.
const [{ runServer }, { SourceConfigError }, { LogOpenError }] = await Promise.all([
  import('./server.js'),
  import('./source/source-from-config.js'),
  import('./log/event-log.js'),
]);
try {
  await runServer(config);
} catch (error) {
  if (error instanceof SourceConfigError || error instanceof LogOpenError) fail(EXIT_CONFIGURATION, error.message);
  fail(1, `failed to start: ${(error as Error).message}`);
}

function fail(status: number, message: string): never {
  process.stderr.write(`rdf-stream-publisher: ${message}\n`);
  process.exit(status);
}
