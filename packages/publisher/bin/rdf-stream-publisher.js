#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (`pnpm --filter @rdf-stream/publisher build`),
// node started again first with the publisher's options where they were not given and it can
// (docs/configuration.md, "Node's options").
import { fileURLToPath } from 'node:url';
import { restartWithPublisherOptions } from '../dist/node-options.js';

restartWithPublisherOptions({ script: fileURLToPath(import.meta.url) });
await import('../dist/cli.js');
