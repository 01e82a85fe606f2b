import type { StreamUpdate, SubscriptionEvent } from '../../src/subscribe.js';

/**
 * Consumes a subscription in the background; `next(n)` resolves when n updates have arrived.
 * The server side publishes when the test says so, so every wait is for an event.
 */
export function collect(iterable: AsyncIterable<SubscriptionEvent>) {
  const events: SubscriptionEvent[] = [];
  const waiters: Array<() => void> = [];
  let failure: unknown;
  const done = (async () => {
    try {
      for await (const event of iterable) {
        events.push(event);
        for (const wake of waiters.splice(0)) wake();
      }
    } catch (error) {
      failure = error;
      for (const wake of waiters.splice(0)) wake();
    }
  })();
  const updates = () => events.filter((event): event is StreamUpdate => event.type === 'update');
  const until = (ready: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (failure !== undefined) reject(failure);
        else if (ready()) resolve();
        else waiters.push(check);
      };
      check();
    });
  return { events, updates, done, until, next: (count: number) => until(() => updates().length >= count) };
}
