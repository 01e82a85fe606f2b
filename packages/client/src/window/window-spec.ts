/** Time-based windows on event time (generatedAt): RANGE and STEP in ms; tumbling when equal. */
export interface TimeWindowSpec {
  readonly kind: 'time';
  readonly rangeMs: number;
  readonly stepMs: number;
}

/** Count-based windows: the last `size` elements, every `step` elements; tumbling when equal. */
export interface CountWindowSpec {
  readonly kind: 'count';
  readonly size: number;
  readonly step: number;
}

export type WindowSpec = TimeWindowSpec | CountWindowSpec;

/** One closed window and what it holds. Times are ms since the epoch (server clock). */
export interface ClosedWindow<T> {
  /** Inclusive start and exclusive end (time windows), or the sequence bounds (count windows). */
  readonly start: number;
  readonly end: number;
  readonly items: readonly T[];
}

export interface WindowStats {
  /** Elements that arrived after every window they belong to had closed: counted, not used. */
  late: number;
  /** Empty windows not emitted because more than `maxConsecutiveEmptyWindows` were due at once. */
  skippedEmptyWindows: number;
  /** Elements dropped because the buffer held `maxBufferedItems` already. */
  overflow: number;
}
