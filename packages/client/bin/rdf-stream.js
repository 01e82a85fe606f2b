#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (`pnpm --filter @rdf-stream/client build`).
import '../dist/cli.js';
