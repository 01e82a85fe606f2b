/** What holds push connections: a stream's SSE and WebSocket subscribers (`Broadcaster`), the Solid notification receivers. */
export interface PushAudience {
  /** Writes a heartbeat to every connection (an empty SSE comment, a WebSocket ping). */
  heartbeat(): Promise<void> | void;
  /** Ends every connection telling it to come back after `retryMs()` (drawn per connection). */
  closeAll(retryMs: () => number): Promise<void> | void;
}

/**
 * Every push connection of the publisher, whatever its interface: one heartbeat keeps them all
 * open through proxies, and one shutdown tells them all when to come back.
 */
export class PushConnections {
  readonly #audiences: readonly PushAudience[];
  readonly #onError: (error: unknown) => void;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(audiences: readonly PushAudience[], onError: (error: unknown) => void) {
    this.#audiences = audiences;
    this.#onError = onError;
  }

  startHeartbeat(intervalMs: number): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = setInterval(() => {
      for (const audience of this.#audiences) Promise.resolve().then(() => audience.heartbeat()).catch(this.#onError);
    }, intervalMs).unref();
  }

  /** Stops the heartbeat and ends every connection (see `PushAudience.closeAll`). */
  async closeAll(retryMs: () => number): Promise<void> {
    clearInterval(this.#heartbeat);
    await Promise.all(this.#audiences.map((audience) => audience.closeAll(retryMs)));
  }
}
