/** Anything stored in a log carries its sequence number. */
export interface Sequenced {
  readonly seq: number;
}

/**
 * The ordered, bounded history of one stream: the single source of truth that broadcasting,
 * resuming and polling read from ("persist, then dispatch").
 */
export interface EventLog<T extends Sequenced> {
  /** Identifies this log's life: it changes whenever sequence numbers start again. */
  readonly epoch: string;
  /** The sequence number the next appended entry must carry. */
  readonly nextSeq: number;
  /** Sequence number of the newest entry, 0 when empty. */
  readonly latestSeq: number;
  /** Sequence number of the oldest retained entry, undefined when empty. */
  readonly oldestSeq: number | undefined;
  /** Retention limit (count of entries). */
  readonly capacity: number;
  /** Only while empty: the next entry will carry `seq` (continuing a numbering started elsewhere). */
  startAt(seq: number): void;
  /** Appends `entry`, whose `seq` must equal `nextSeq`; evicts the oldest entry beyond capacity. */
  append(entry: T): void;
  get(seq: number): T | undefined;
  latest(): T | undefined;
}
