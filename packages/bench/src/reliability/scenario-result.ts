/** What a scenario found: its figures, and the properties that must hold, each with what was observed. */
export interface ScenarioResult {
  readonly name: string;
  /** The weakness the scenario guards against. */
  readonly weakness: string;
  readonly seconds: number;
  readonly figures: Readonly<Record<string, number | string>>;
  readonly checks: readonly Check[];
  /** Measurements over time, drawn as a chart beside the results (`<scenario>-<name>.svg/png`). */
  readonly series?: readonly Series[];
}

/** A chart's data: points of several named lines against seconds since the scenario began. */
export interface Series {
  readonly name: string;
  readonly title: string;
  readonly unit: string;
  readonly points: ReadonlyArray<{ readonly seconds: number; readonly line: string; readonly value: number }>;
}

export interface Check {
  readonly what: string;
  readonly holds: boolean;
  readonly observed: string;
  /**
   * A bound on time (latency, restart, exit): enforced by `pnpm test:reliability`, reported but
   * not asserted by the short runs inside `pnpm test`, whose machine is shared and noisy.
   */
  readonly timed: boolean;
}

export const check = (what: string, holds: boolean, observed: string | number): Check => ({ what, holds, observed: String(observed), timed: false });

/** A check on time; see `Check.timed`. */
export const timedCheck = (what: string, holds: boolean, observed: string | number): Check => ({ ...check(what, holds, observed), timed: true });

/** Uniformly between `min` and `max`. */
export const between = (min: number, max: number) => min + Math.random() * (max - min);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Logs a progress line (stderr, so that the table on stdout stays clean). */
export const progress = (scenario: string, message: string) => process.stderr.write(`[${scenario}] ${message}\n`);
