#!/usr/bin/env node
// Placeholder until the benchmark package is written: fail loudly rather than pretend to measure.
process.stderr.write(
  'pnpm bench: the benchmark is not implemented yet (see packages/bench/README.md).\n' +
    'To measure the publisher today: docs/bench.md describes the autocannon run used for the figures.\n',
);
process.exit(1);
