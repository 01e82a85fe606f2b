/**
 * What opening a fleet's connections costs, by how their source is chosen: `--connections`
 * connections to a loopback listener, opened `--rounds` times, each round closed by the client
 * (so that its ports are in TIME_WAIT on this side when the next round opens). `--from none`
 * lets the kernel's `connect()` choose; `--from bind-any` binds to `--address` with port 0, as a
 * socket given only `localAddress` does; `--from bind-port` binds to `--address` with a port named
 * for each connection, as the bench's fleet does (`SourceEndpoint`), a different range each
 * round when `--shift` is given. Prints, per round, the time until every connection was open and
 * the process's CPU in the kernel.
 *
 *   pnpm exec tsx packages/bench/scripts/connect-cost.ts --from bind-any --address 127.0.0.3
 *   pnpm exec tsx packages/bench/scripts/connect-cost.ts --from bind-port --address 127.0.0.4
 */
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '8000' },
    rounds: { type: 'string', default: '3' },
    from: { type: 'string', default: 'bind-port' },
    address: { type: 'string', default: '127.0.0.3' },
    'first-port': { type: 'string', default: '33000' },
    shift: { type: 'boolean', default: false },
  },
});
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const from = values.from;
if (from !== 'none' && from !== 'bind-any' && from !== 'bind-port') throw new Error('--from: none, bind-any or bind-port');
/** Connections started before the loop yields, so that the listener accepts as they come. */
const BATCH = 200;

const server = createServer((socket) => socket.on('error', () => undefined));
server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 });
await once(server, 'listening');
const { port } = server.address() as AddressInfo;

const source = (round: number, index: number) => {
  if (from === 'none') return {};
  if (from === 'bind-any') return { localAddress: values.address };
  return { localAddress: values.address, localPort: Number(values['first-port']) + (values.shift ? round * connections : 0) + index };
};

for (let round = 0; round < rounds; round++) {
  const sockets: Socket[] = [];
  let open = 0;
  let failed = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const settled = () => {
      if (open + failed === connections) resolve();
    };
    let index = 0;
    const step = () => {
      for (let batch = 0; batch < BATCH && index < connections; batch++, index++) {
        const socket = connect({ host: '127.0.0.1', port, ...source(round, index) });
        socket.once('connect', () => {
          open++;
          settled();
        });
        socket.once('error', () => {
          failed++;
          settled();
        });
        sockets.push(socket);
      }
      if (index < connections) setImmediate(step);
    };
    step();
  });
  const elapsedMs = performance.now() - started;
  const { system } = process.cpuUsage(cpu);
  console.log(`round ${round + 1}: ${open} open, ${failed} failed in ${(elapsedMs / 1000).toFixed(1)} s, ${(system / 1e6).toFixed(1)} s of CPU in the kernel`);
  for (const socket of sockets) socket.destroy();
  // Let the closes reach the listener before the next round.
  await sleep(1_500);
}
server.close();
