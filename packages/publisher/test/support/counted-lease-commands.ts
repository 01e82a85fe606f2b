import type { LeaseCommands } from '../../src/log/redis/source-lease.js';

/**
 * A client's lease commands, passed through to the real server, counting the answers (and
 * failures): a test awaits "Redis answered the n-th command and the lease has seen it" instead of
 * sleeping.
 */
export function countedLeaseCommands(client: LeaseCommands) {
  let answered = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const settle = () => {
    answered += 1;
    for (const waiter of waiters.filter((w) => w.count <= answered)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      // After the lease's own continuation has run.
      setImmediate(waiter.resolve);
    }
  };
  const commands: LeaseCommands = {
    set: (key, value, options) => client.set(key, value, options).finally(settle),
    eval: (script, options) => client.eval(script, options).finally(settle),
  };
  return {
    commands,
    get answered() {
      return answered;
    },
    /** Resolves once `count` commands have been answered in all. */
    until: (count: number) => new Promise<void>((resolve) => (count <= answered ? setImmediate(resolve) : waiters.push({ count, resolve }))),
  };
}
