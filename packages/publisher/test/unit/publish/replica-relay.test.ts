import { describe, expect, it } from 'vitest';
import { follow, isGap } from '../../../src/log/follow-log.js';
import { MemoryEventLog } from '../../../src/log/memory-event-log.js';
import { relayLog, type RelayedStep } from '../../../src/publish/replica-relay.js';
import { loggedElement } from '../../support/logged-element.js';

/** A writer's log and a cluster worker's replica of it, joined by the relay as `cluster.ts` joins them. */
function writerAndReplica(writerRetainedElements: number) {
  const writer = new MemoryEventLog(1, { retainedElements: writerRetainedElements, retainedSeconds: 0 });
  const replica = new MemoryEventLog(1, { retainedElements: 100, retainedSeconds: 0 }, { epoch: writer.epoch, replica: true });
  const relayed: string[] = [];
  const refused: unknown[] = [];
  const relay = relayLog(
    writer,
    (step: RelayedStep) => {
      if (step.kind === 'gap') {
        relayed.push(`gap ${step.from}–${step.to} (${step.reason})`);
        return;
      }
      relayed.push(String(step.element.seq));
      replica.append(step.element).catch((error: unknown) => refused.push(error));
    },
    (error) => refused.push(error),
  );
  const append = (seq: number) => writer.append(loggedElement(seq, undefined, writer.epoch));
  return { writer, replica, relay, relayed, refused, append };
}

describe('relayLog', () => {
  it('relays each element once, in order, when several become durable in one turn', async () => {
    const { replica, relay, relayed, refused, append } = writerAndReplica(100);
    await Promise.all([append(1), append(2), append(3)]);
    await relay.idle();
    expect(relayed).toEqual(['1', '2', '3']);
    expect(refused).toEqual([]);
    expect(replica.latestSeq).toBe(3);
  });

  it('relays the gap of elements retention removed before they were sent, and the replica goes on after it', async () => {
    // The writer keeps one element: three appended in one turn leave only the newest to read.
    const { replica, relay, relayed, refused, append } = writerAndReplica(1);
    await append(1);
    await relay.idle();
    await Promise.all([append(2), append(3), append(4)]);
    await relay.idle();
    await append(5);
    await relay.idle();

    // Skipping 2 and 3 silently left the replica refusing 4 and every element after it.
    expect(relayed).toEqual(['1', 'gap 2–3 (expired)', '4', '5']);
    expect(refused).toEqual([]);
    expect(replica.latestSeq).toBe(5);

    // The replica's own readers (its subscribers) get the gap, not 4 in the place of 2.
    const cursor = follow(replica, 1);
    const first = await cursor.next(10);
    expect(isGap(first) ? [first.reason, first.from, first.to] : first).toEqual(['expired', 2, 3]);
    const rest = await cursor.next(10);
    expect(isGap(rest) ? rest : rest.map((element) => element.seq)).toEqual([4, 5]);
  });
});
