import { type Clock, realClock } from '../../clock-and-logger.js';
import type { ChannelRecord, ChannelStore } from './channel-store.js';

/**
 * The channels in this process's memory (the default): another instance or worker does not see
 * them, and a restart forgets them. Ended channels are dropped when next counted or read.
 */
export class MemoryChannelStore implements ChannelStore {
  readonly #records = new Map<string, ChannelRecord>();
  readonly #clock: Clock;

  constructor(clock: Clock = realClock) {
    this.#clock = clock;
  }

  async create(record: ChannelRecord, maxChannels: number): Promise<boolean> {
    this.#dropEnded();
    if (this.#records.size >= maxChannels) return false;
    this.#records.set(record.id, record);
    return true;
  }

  async get(id: string): Promise<ChannelRecord | undefined> {
    return this.#unended(id);
  }

  async delete(id: string): Promise<boolean> {
    const stored = this.#unended(id) !== undefined;
    this.#records.delete(id);
    return stored;
  }

  async count(): Promise<number> {
    this.#dropEnded();
    return this.#records.size;
  }

  async stored(ids: readonly string[]): Promise<Set<string>> {
    return new Set(ids.filter((id) => this.#unended(id) !== undefined));
  }

  async setKnownState(id: string, state: string): Promise<void> {
    const record = this.#unended(id);
    if (record !== undefined) this.#records.set(id, { ...record, knownState: state });
  }

  #unended(id: string): ChannelRecord | undefined {
    const record = this.#records.get(id);
    if (record === undefined || record.endAtMs > this.#clock.now()) return record;
    this.#records.delete(id);
    return undefined;
  }

  #dropEnded(): void {
    const now = this.#clock.now();
    for (const [id, record] of this.#records) if (record.endAtMs <= now) this.#records.delete(id);
  }
}
