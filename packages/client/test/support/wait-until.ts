/**
 * Waits for server-side state a test cannot subscribe to (a connection reaching the server).
 * Checks every 10 ms, fails after `timeoutMs` (generous: the deadline is for a broken server,
 * not a measure of speed).
 */
export async function waitUntil(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    // A timer, not setImmediate: spinning would keep a core busy that the server (and the first
    // import of Comunica, on a loaded machine) needs.
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
