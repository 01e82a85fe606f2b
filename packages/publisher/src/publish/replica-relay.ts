import type { EventLog } from '../log/event-log.js';
import { follow, isGap, type LogGap } from '../log/follow-log.js';
import type { LoggedElement } from '../render/render-element.js';

/** What the writer tells a replica of its log, in the log's order: an element, or the elements it cannot send. */
export type RelayedStep = { readonly kind: 'element'; readonly element: LoggedElement } | LogGap;

/** Elements read from the log at a time when several became durable together (count). */
const relayReadElements = 64;

/** A relay of one log: what a test awaits instead of polling. */
export interface LogRelay {
  /** Resolves once every element announced so far has been handed to `send` (or its gap). */
  idle(): Promise<void>;
}

/**
 * Hands `send` every element `log` makes durable from now on, one at a time and in order, even
 * when a group commit made several durable at once; an element the log no longer has when the
 * relay reads it (retention overtook it) is sent as a gap, so that a replica knows it will not
 * come instead of waiting for it or taking the next one for it. A read that fails goes to
 * `onError`; the next announcement retries from the same place.
 */
export function relayLog(log: EventLog, send: (step: RelayedStep) => void, onError: (error: unknown) => void): LogRelay {
  const cursor = follow(log, log.latestSeq);
  let relaying = Promise.resolve();
  log.onAppended(() => {
    relaying = relaying
      .then(async () => {
        while (!cursor.caughtUp) {
          const step = await cursor.next(relayReadElements);
          if (isGap(step)) send(step);
          else for (const element of step) send({ kind: 'element', element });
        }
      })
      .catch(onError);
  });
  return { idle: () => relaying };
}
