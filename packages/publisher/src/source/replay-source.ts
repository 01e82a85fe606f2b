import { readFileSync, type Stats, statSync } from 'node:fs';
import { extname } from 'node:path';
import type { Quad, Term } from '@rdfjs/types';
import type { N3Format } from '../model/input-formats.js';
import { parseN3, RdfInputError } from '../model/rdf-input.js';
import { extractObservations } from '../model/extract-observations.js';
import type { Observation } from '../model/observation.js';
import { prov } from '../model/vocabulary.js';
import type { ElementSource, ObservationSink, SourceHealth } from './element-source.js';
import { type Clock, type Logger, realClock } from '../clock-and-logger.js';

export type RecordingFormat = N3Format;

export interface ReplaySourceOptions {
  /** Absolute path of the recording. */
  readonly file: string;
  /** Defaults to the file's extension: `.trig`, `.nq`, `.ttl`, `.nt`. */
  readonly format?: RecordingFormat;
  /** Playback speed factor (> 0): 2 plays twice as fast as recorded. */
  readonly speed: number;
  /** Start again after the last element. */
  readonly loop: boolean;
  /** Larger recordings are refused: the whole file is parsed into memory at start-up. */
  readonly maxFileBytes: number;
  readonly logger: Logger;
  /** Injected for tests; defaults to the wall clock and real (unref'd) timers. */
  readonly clock?: Clock;
}

/** A recording that cannot be replayed; the message names the file (and the line of a syntax error). */
export class ReplayFileError extends Error {
  override readonly name = 'ReplayFileError';
}

const formatsByExtension: Readonly<Record<string, RecordingFormat>> = {
  '.trig': 'trig',
  '.nq': 'nquads',
  '.ttl': 'turtle',
  '.nt': 'ntriples',
};

/** One recorded element: its recorded time and its observations, already rewritten for replay. */
interface RecordedElement {
  readonly recordedAt: number;
  readonly observations: readonly Observation[];
}

/** Gaps within this fraction of the median count as one regular interval. */
const REGULAR_INTERVAL_TOLERANCE = 0.01;

/**
 * Replays a recorded RDF file as a live stream (TripleWave's replay mode): elements are sent
 * with the recorded spacing divided by `speed`, and timestamped with the time of publication.
 * The file is read and checked in the constructor, so that a bad recording fails at start-up.
 */
export class ReplaySource implements ElementSource {
  readonly kind = 'replay';
  readonly expectedIntervalMs: number | null;
  readonly #elements: readonly RecordedElement[];
  /** The median recorded gap: the wait from the last element back to the first when looping, which nothing was recorded for. */
  readonly #loopGapMs: number;
  readonly #speed: number;
  readonly #loop: boolean;
  readonly #clock: Clock;
  readonly #recordsRejected: number;
  readonly #logger: Logger;
  /** Where the next `start` begins (`resumeAfter`); `length` once a recording played once is over. */
  #nextIndex = 0;
  #timer: unknown;
  #running = false;
  #started = false;

  constructor(options: ReplaySourceOptions) {
    if (!(options.speed > 0 && Number.isFinite(options.speed))) {
      throw new RangeError(`Replay speed must be a positive number, got ${options.speed}`);
    }
    this.#speed = options.speed;
    this.#loop = options.loop;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger;
    const { elements, rejected } = loadRecording(options);
    for (const { subject, reason } of rejected) {
      options.logger.warn({ file: options.file, subject, reason }, 'Replay: observation skipped');
    }
    this.#elements = elements;
    this.#recordsRejected = rejected.length;

    const gaps = elements.slice(1).map((element, index) => element.recordedAt - elements[index]!.recordedAt);
    this.#loopGapMs = median(gaps);
    if (options.loop && this.#loopGapMs <= 0) {
      throw new ReplayFileError(`Recording ${options.file} cannot loop: its elements are not spread in time`);
    }
    const regular =
      this.#loopGapMs > 0 && gaps.every((gap) => Math.abs(gap - this.#loopGapMs) <= REGULAR_INTERVAL_TOLERANCE * this.#loopGapMs);
    this.expectedIntervalMs = regular ? this.#loopGapMs / this.#speed : null;
    options.logger.info(
      { file: options.file, elements: elements.length, recordsRejected: rejected.length },
      'Replay: recording loaded',
    );
  }

  /**
   * Sends the first element at once, then the next ones on the recording's timeline. The timeline
   * is kept from start (not from each callback) so the sink's own time does not add up as drift;
   * after a stall it resumes from now rather than sending the missed elements in a burst.
   */
  start(sink: ObservationSink): void {
    if (this.#running) return;
    this.#started = true;
    let index = this.#nextIndex;
    this.#nextIndex = 0;
    // Resumed after the last element of a recording played once: it is over.
    if (index >= this.#elements.length) return;
    this.#running = true;
    let dueAt = this.#clock.now();
    const emit = () => {
      if (!this.#running) return;
      const element = this.#elements[index]!;
      sink(element.observations, new Date(this.#clock.now()));
      const next = this.#elements[index + 1];
      let gapMs: number;
      if (next !== undefined) {
        gapMs = next.recordedAt - element.recordedAt;
        index += 1;
      } else if (this.#loop) {
        gapMs = this.#loopGapMs;
        index = 0;
      } else {
        this.stop();
        return;
      }
      const now = this.#clock.now();
      dueAt = Math.max(dueAt + gapMs / this.#speed, now);
      this.#timer = this.#clock.setTimeout(emit, dueAt - now);
    };
    emit();
  }

  /**
   * The next `start` continues after the recorded element whose observations these are, as the
   * log holds them (their phenomenon times, results and sensors; the result time is the
   * publication's); the first such element if the recording repeats one. Not found (another
   * recording, or an element of another source): the next start begins at the first element.
   */
  resumeAfter(observations: readonly Observation[]): boolean {
    const wanted = elementFingerprint(observations);
    const index = this.#elements.findIndex((element) => elementFingerprint(element.observations) === wanted);
    if (index === -1) {
      this.#logger.warn({ observations: observations.length }, 'Replay: the log\'s latest element is not in the recording; it starts from its first element');
      this.#nextIndex = 0;
      return false;
    }
    const next = index + 1;
    this.#nextIndex = next < this.#elements.length ? next : this.#loop ? 0 : this.#elements.length;
    this.#logger.info({ after: index, of: this.#elements.length }, 'Replay: resuming after the log\'s latest element');
    return true;
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  health(): SourceHealth {
    return { state: this.#running ? 'ok' : this.#started ? 'stopped' : 'starting', recordsRejected: this.#recordsRejected };
  }
}

/**
 * What identifies a replayed element among a recording's: its observations' local ids, sensors,
 * properties, features, results and phenomenon times (which replay keeps), in any order.
 */
function elementFingerprint(observations: readonly Observation[]): string {
  return observations
    .map((o) => JSON.stringify([o.id, o.sensor, o.observedProperty, o.featureOfInterest, o.simpleResult, o.unit ?? null, o.phenomenonTime?.toISOString() ?? null]))
    .sort()
    .join('\n');
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function recordingFormat(file: string, format: RecordingFormat | undefined): RecordingFormat {
  if (format !== undefined) return format;
  const byExtension = formatsByExtension[extname(file).toLowerCase()];
  if (byExtension === undefined) {
    throw new ReplayFileError(`Cannot tell the format of recording ${file} from its extension (.trig, .nq, .ttl, .nt): set its format`);
  }
  return byExtension;
}

function readRecording(file: string, maxFileBytes: number): string {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ReplayFileError(missing ? `Recording ${file} does not exist` : `Cannot read recording ${file}: ${String(error)}`);
  }
  if (!stats.isFile()) throw new ReplayFileError(`Recording ${file} is not a file`);
  if (stats.size > maxFileBytes) {
    throw new ReplayFileError(`Recording ${file} is ${stats.size} bytes, more than the limit of ${maxFileBytes}`);
  }
  return readFileSync(file, 'utf8');
}

function parseRecording(file: string, format: RecordingFormat, text: string): Quad[] {
  try {
    return parseN3(text, format);
  } catch (error) {
    if (!(error instanceof RdfInputError)) throw error;
    const where = error.line === undefined ? '' : ` at line ${error.line}`;
    throw new ReplayFileError(`Recording ${file} is not valid ${format}${where}: ${error.message}`);
  }
}

function timeOf(term: Term | undefined): number | undefined {
  if (term?.termType !== 'Literal') return undefined;
  const at = Date.parse(term.value);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * Observations as replayed: without `resultTime` (the publisher writes the time of publication),
 * their original time kept as `phenomenonTime`; `fallback` stands in for an observation recorded
 * without either time.
 */
function forReplay(observation: Observation, fallback: number): Observation {
  const { resultTime, phenomenonTime, ...rest } = observation;
  return { ...rest, phenomenonTime: phenomenonTime ?? resultTime ?? new Date(fallback) };
}

/** Elements of observations with equal `sosa:resultTime` (how a recording without graphs is cut). */
function groupByResultTime(file: string, observations: readonly Observation[]): RecordedElement[] {
  const groups = new Map<number, Observation[]>();
  for (const observation of observations) {
    if (observation.resultTime === undefined) {
      throw new ReplayFileError(`Recording ${file}: observation ${observation.id} has no sosa:resultTime to place it in time`);
    }
    const at = observation.resultTime.getTime();
    const group = groups.get(at);
    if (group) group.push(observation);
    else groups.set(at, [observation]);
  }
  return [...groups].map(([recordedAt, group]) => ({ recordedAt, observations: group.map((o) => forReplay(o, recordedAt)) }));
}

/**
 * Cuts the recording into elements. With graphs (TriG, N-Quads), each named graph is one element,
 * at its `prov:generatedAtTime` in the default graph, else at its latest `sosa:resultTime`;
 * observations in the default graph (and all of a Turtle or N-Triples file) are grouped by
 * `sosa:resultTime`. Elements come sorted by time.
 */
function loadRecording(options: ReplaySourceOptions): {
  elements: RecordedElement[];
  rejected: Array<{ subject: string; reason: string }>;
} {
  const { file } = options;
  const format = recordingFormat(file, options.format);
  const quads = parseRecording(file, format, readRecording(file, options.maxFileBytes));

  const defaultGraph: Quad[] = [];
  const namedGraphs = new Map<string, Quad[]>();
  for (const q of quads) {
    if (q.graph.termType === 'DefaultGraph') {
      defaultGraph.push(q);
      continue;
    }
    const graph = namedGraphs.get(q.graph.value);
    if (graph) graph.push(q);
    else namedGraphs.set(q.graph.value, [q]);
  }
  const generatedAt = new Map<string, number>();
  for (const q of defaultGraph) {
    const at = q.predicate.value === prov.generatedAtTime ? timeOf(q.object) : undefined;
    if (at !== undefined) generatedAt.set(q.subject.value, at);
  }

  const elements: RecordedElement[] = [];
  const rejected: Array<{ subject: string; reason: string }> = [];
  for (const [graph, graphQuads] of namedGraphs) {
    const extracted = extractObservations(graphQuads);
    rejected.push(...extracted.rejected);
    if (extracted.observations.length === 0) continue;
    const latestResultTime = extracted.observations.reduce<number | undefined>(
      (latest, o) => (o.resultTime === undefined ? latest : Math.max(latest ?? -Infinity, o.resultTime.getTime())),
      undefined,
    );
    const recordedAt = generatedAt.get(graph) ?? latestResultTime;
    if (recordedAt === undefined) {
      throw new ReplayFileError(`Recording ${file}: element <${graph}> has neither a prov:generatedAtTime nor a sosa:resultTime`);
    }
    elements.push({ recordedAt, observations: extracted.observations.map((o) => forReplay(o, recordedAt)) });
  }
  const ungraphed = extractObservations(defaultGraph);
  rejected.push(...ungraphed.rejected);
  elements.push(...groupByResultTime(file, ungraphed.observations));

  if (elements.length === 0) throw new ReplayFileError(`Recording ${file} holds no SOSA observations`);
  elements.sort((a, b) => a.recordedAt - b.recordedAt);
  return { elements, rejected };
}
