import { LatencyRecorder } from '@rdf-stream/client';
import { elementStamp, elementStampIn } from './timestamp.js';

/** The stamp of the element in `body`: its text, or its UTF-8 bytes (`elementStampIn`). */
const stampOf = (body: string | Buffer) => (typeof body === 'string' ? elementStamp(body) : elementStampIn(body));

/** One simulated client's record: when it was first answered, and the elements it got. */
export interface FleetClient {
  connectedAt: number | undefined;
  seqs: number[];
}

/** One element as a worker reports it: when it was generated, and its latencies (an HDR histogram). */
export interface RecordedElement {
  readonly seq: number;
  readonly generatedAtMs: number;
  readonly histogram: string;
}

/**
 * A worker's record of the updates its clients got: per element (by sequence number) an HDR
 * histogram of its latency on every client that got it, and a sample of raw latencies.
 */
export class UpdateRecorder {
  /** Latencies kept as raw values, as `[seq, latencyMs]`. */
  readonly samples: Array<[number, number]> = [];
  updates = 0;
  readonly #elements = new Map<number, { generatedAtMs: number; recorder: LatencyRecorder }>();
  readonly #measureFromMs: number;
  readonly #sampleRate: number;
  readonly #random: () => number;

  /** Elements generated before `measureFromMs` (the end of the ramp, epoch ms) are not measured. */
  constructor(measureFromMs: number, sampleRate: number, random: () => number = Math.random) {
    this.#measureFromMs = measureFromMs;
    this.#sampleRate = sampleRate;
    this.#random = random;
  }

  /**
   * Records the element in `body` (its text, or its UTF-8 bytes: see `elementStampIn`) the first
   * time `client` gets it, and returns its stamp.
   * Elements generated before the client was first answered (a poller's first answer is the
   * state it found) or before `measureFromMs` are not measured updates.
   */
  record(client: FleetClient, body: string | Buffer, receivedAt: number): ReturnType<typeof elementStamp> {
    const stamp = stampOf(body);
    const from = Math.max(this.#measureFromMs, client.connectedAt ?? Number.POSITIVE_INFINITY);
    if (stamp === undefined || stamp.generatedAtMs < from || client.seqs.includes(stamp.seq)) return stamp;
    client.seqs.push(stamp.seq);
    const latencyMs = receivedAt - stamp.generatedAtMs;
    let element = this.#elements.get(stamp.seq);
    if (element === undefined) {
      element = { generatedAtMs: stamp.generatedAtMs, recorder: new LatencyRecorder() };
      this.#elements.set(stamp.seq, element);
    }
    element.recorder.record(latencyMs);
    this.updates++;
    if (this.#random() < this.#sampleRate) this.samples.push([stamp.seq, latencyMs]);
    return stamp;
  }

  /**
   * Reads the element in `body` as the state `client` found (a poller's first answer), not an
   * update: never measured, and returned with its stamp. Generated before the client's first
   * answer, it is not one of the updates the client should receive (`countUpdates`); stamped with
   * the very millisecond of that answer (an element served as it is generated), it would count as
   * one, and it is noted as received.
   */
  found(client: FleetClient, body: string | Buffer): ReturnType<typeof elementStamp> {
    const stamp = stampOf(body);
    if (stamp !== undefined && client.connectedAt !== undefined && stamp.generatedAtMs >= client.connectedAt && !client.seqs.includes(stamp.seq)) client.seqs.push(stamp.seq);
    return stamp;
  }

  elements(): RecordedElement[] {
    return [...this.#elements].map(([seq, element]) => ({ seq, generatedAtMs: element.generatedAtMs, histogram: element.recorder.encode() }));
  }
}
