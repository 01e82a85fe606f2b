import type { Observation } from '../model/observation.js';

/** Receives each batch of observations a source produces, stamped with its generation time. */
export type ObservationSink = (observations: readonly Observation[], generatedAt: Date) => void;

export type SourceState = 'starting' | 'ok' | 'degraded' | 'stopped';

/** What `/health` shows of a source. */
export interface SourceHealth {
  /**
   * `starting`: not started yet (the publisher listens before it starts its sources, and after a
   * restart serves what its log holds meanwhile); `ok`: producing (or waiting for input, as
   * sources pushed to do); `degraded`: its upstream fails (the stream keeps serving its last
   * element); `stopped`: finished (a replay played once) or stopped after it started. Never
   * `stopped` before the first start.
   */
  readonly state: SourceState;
  /** Why it is degraded: the last upstream error, without secrets. */
  readonly detail?: string;
  /** ISO time of the last successful contact with the upstream, if the source has one. */
  readonly lastSuccessAt?: string | null;
  /** Upstream records that could not be mapped to observations (logged and skipped). */
  readonly recordsRejected: number;
  /**
   * With a shared log, whether this instance holds the source's lease and runs it (`false`: another
   * instance runs it, and this one serves what the log holds). Absent when the source is not leased.
   */
  readonly leaseHolder?: boolean;
}

/** Where a stream's elements come from. */
export interface ElementSource {
  /** `simulator`, `replay`, `web-api`, `mqtt`, `manual`… (shown in `/health`). */
  readonly kind: string;
  /** Milliseconds between two elements, or `null` for an irregular stream. */
  readonly expectedIntervalMs: number | null;
  /** Begins producing. A source may call `sink` synchronously (the first element at once). */
  start(sink: ObservationSink): void;
  /** Stops producing and releases timers, sockets and connections; idempotent. */
  stop(): void | Promise<void>;
  health(): SourceHealth;
  /**
   * Makes the next `start` continue after the element these observations were read from (the
   * newest in the log), instead of from the source's beginning: how an instance that takes a
   * source over continues the one that ran it. False when the source cannot place them (it then
   * starts as it would have). Sources whose input is live (web APIs, MQTT) have nothing to resume.
   */
  resumeAfter?(observations: readonly Observation[]): boolean;
}
