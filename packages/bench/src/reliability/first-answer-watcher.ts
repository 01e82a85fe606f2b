/**
 * The process `watchFirstAnswer` forks: once told to start, probes its URL on a fresh connection
 * every 50 ms (each attempt given up after a second) and reports the wall-clock time (ms since the
 * epoch) of the first 200, or null at its deadline.
 */
import { probe } from './probe.js';
import { sleep } from './scenario-result.js';

const [url, deadline] = process.argv.slice(2) as [string, string];
/** Each attempt's own limit: a fresh one follows 50 ms after. */
const ATTEMPT_TIMEOUT_MS = 1_000;

process.once('message', async () => {
  const until = Date.now() + Number(deadline);
  let answeredAt: number | null = null;
  while (answeredAt === null && Date.now() < until) {
    if ((await probe(url, ATTEMPT_TIMEOUT_MS)).status === 200) answeredAt = Date.now();
    else await sleep(50);
  }
  process.send!({ answeredAt }, () => process.exit(0));
});
process.send!('ready');
