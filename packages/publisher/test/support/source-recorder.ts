import type { Observation } from '../../src/model/observation.js';
import type { Logger } from '../../src/clock-and-logger.js';

/** Collects the elements a source publishes; `next()` resolves on the next one. */
export class Elements {
  readonly received: Array<readonly Observation[]> = [];
  #waiting: Array<(observations: readonly Observation[]) => void> = [];

  readonly sink = (observations: readonly Observation[]) => {
    this.received.push(observations);
    for (const resolve of this.#waiting.splice(0)) resolve(observations);
  };

  next(): Promise<readonly Observation[]> {
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** A source logger that keeps every call, for assertions. */
export class RecordingLogger implements Logger {
  readonly calls: Array<{ level: 'info' | 'warn' | 'error'; fields: object; message: string }> = [];
  info(fields: object, message: string): void {
    this.calls.push({ level: 'info', fields, message });
  }
  warn(fields: object, message: string): void {
    this.calls.push({ level: 'warn', fields, message });
  }
  error(fields: object, message: string): void {
    this.calls.push({ level: 'error', fields, message });
  }
}
