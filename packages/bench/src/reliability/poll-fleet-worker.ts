/** A `PollFleet` in a process of its own (see `PollFleetProcess`): started at once, stopped on `stop`. */
import { PollFleet } from './poll-fleet.js';
import type { PollFleetMessage, PollFleetOptions } from './poll-fleet-process.js';

const { latestUrl, pollers, pollIntervalMs } = JSON.parse(process.argv[2]!) as PollFleetOptions;
const send = (message: PollFleetMessage, then: () => void = () => undefined) => process.send!(message, then);
const fleet = new PollFleet(latestUrl, pollers, pollIntervalMs);
await fleet.start();
send({ type: 'started', stats: { ...fleet.stats } });
const timer = setInterval(() => send({ type: 'stats', stats: { ...fleet.stats } }), 1_000);
process.once('message', () => {
  clearInterval(timer);
  void fleet.stop().then(() => send({ type: 'stopped', stats: { ...fleet.stats } }, () => process.exit(0)));
});
