import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { subscribe } from '../../src/subscribe.js';
import type { TransportName } from '../../src/transport/transport-event.js';
import { startTestPublisher, type TestPublisher } from '@rdf-stream/publisher/testing';

let running: TestPublisher | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});


describe('a script that stops reading', () => {
  const script = fileURLToPath(new URL('../support/read-and-stop.ts', import.meta.url));
  const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

  // No kill and no deadline of its own: a process that does not exit fails on the test's timeout.
  // The WebSocket runs twice: with the platform's default (`ws` on Node 20, which has no global
  // WebSocket) and with Node's own global WebSocket (`--experimental-websocket` on Node 20; what
  // Node 22 and later, and browsers, use).
  it.each<[TransportName, string, readonly string[]]>([
    ['sse', '', []],
    ['websocket', ' (default)', []],
    ['websocket', ' (global WebSocket)', ['--experimental-websocket', '--disable-warning=ExperimentalWarning']],
    ['poll', '', []],
    ['long-poll', '', []],
  ])('exits by itself after breaking out of a %s%s subscription', async (transport, _how, nodeFlags) => {
    const publisher = await startTestPublisher();
    running = publisher;
    const pushed = transport === 'sse' || transport === 'websocket';
    // Polling reads the newest element at once; push transports deliver only what comes after they connected.
    if (!pushed) await publisher.push();
    const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', script, publisher.streamUrl, transport, '3'], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    // One more element each time the script reports one, until it has read three.
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const read = (output.match(/^update /gm) ?? []).length;
      for (const _ of chunk.match(/^update /gm) ?? []) if (read < 3) void publisher.push();
    });
    const exited = once(child, 'exit');
    if (pushed) {
      await publisher.untilSubscribers(1);
      await publisher.push();
    }
    const [code] = await exited;
    expect(errors).toBe('');
    expect(code).toBe(0);
    expect(output.match(/^update \d+$/gm)).toHaveLength(3);
    expect(output).toMatch(/^stopped reading$/m);
    const global = nodeFlags.length > 0 || 'WebSocket' in globalThis;
    expect(output).toMatch(new RegExp(`^global WebSocket: ${global ? 'yes' : 'no'}$`, 'm'));
  }, 60_000);
});

describe.each<TransportName>(['sse', 'websocket'])('breaking out of a %s subscription', (transport) => {
  it('closes its connection: the publisher sees the subscriber leave', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const subscription = subscribe(publisher.streamUrl, { transport, clockOffset: false });
    const reading = (async () => {
      for await (const event of subscription) if (event.type === 'update') return event.seq;
      return undefined;
    })();
    await publisher.untilSubscribers(1);
    const seq = await publisher.push();
    expect(await reading).toBe(seq);
    await publisher.untilSubscribers(0);
  });

  it('return() while waiting for the next update closes the connection at once', async () => {
    const publisher = await startTestPublisher();
    running = publisher;
    const iterator = subscribe(publisher.streamUrl, { transport, clockOffset: false })[Symbol.asyncIterator]();
    // Nothing is published: this next() waits on the open stream.
    const pending = iterator.next();
    await publisher.untilSubscribers(1);
    await iterator.return!(undefined);
    expect(await pending).toEqual({ done: true, value: undefined });
    await publisher.untilSubscribers(0);
  });
});
