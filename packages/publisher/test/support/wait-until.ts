/**
 * Waits for server-side state that another socket's request changes (a request reaching a
 * handler), which a test cannot subscribe to. Checks every 10 ms and fails after `timeoutMs`
 * (generous: the deadline is for a broken server, not a measure of speed).
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
