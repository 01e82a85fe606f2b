// A cluster worker that leaves 50 ms after SIGTERM, as a publisher's worker drains, reading what its primary sends meanwhile.
process.on('message', () => {});
process.once('SIGTERM', () => setTimeout(() => process.exit(0), 50));
