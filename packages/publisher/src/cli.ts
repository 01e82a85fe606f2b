#!/usr/bin/env node
import { ConfigError, ConfigHelp, loadConfig } from './config/load-config.js';
import { LogOpenError } from './log/event-log.js';
import { runServer } from './server.js';

try {
  // `pnpm start` runs in packages/publisher: paths given on the command line are relative to
  // where the user typed it (pnpm's INIT_CWD).
  const config = loadConfig({ argv: process.argv.slice(2), env: process.env, cwd: process.env.INIT_CWD ?? process.cwd() });
  await runServer(config);
} catch (error) {
  if (error instanceof ConfigHelp) {
    process.stdout.write(error.output);
    process.exit(0);
  }
  if (error instanceof ConfigError || error instanceof LogOpenError) {
    process.stderr.write(`rdf-stream-publisher: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`rdf-stream-publisher: failed to start: ${(error as Error).message}\n`);
  process.exit(1);
}
