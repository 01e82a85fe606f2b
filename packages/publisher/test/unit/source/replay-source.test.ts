import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'n3';
import { afterAll, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/model/observation.js';
import { ReplayFileError, ReplaySource, type ReplaySourceOptions } from '../../../src/source/replay-source.js';
import { validateElement } from '../../support/shacl.js';
import { manualClock } from '../../../src/testing/manual-clock.js';
import type { Logger } from '../../../src/clock-and-logger.js';

// packages/publisher/test/unit/source/ → repository root
const example = (name: string) => fileURLToPath(new URL(`../../../../../ontologies/examples/${name}`, import.meta.url));
const airQuality = example('air-quality-recording.trig');
const traffic = example('traffic-recording.ttl');

const START = Date.parse('2026-05-01T12:00:00Z');
const AIR_QUALITY_FIRST = Date.parse('2026-03-14T08:00:00Z');
/** Seconds between the traffic recording's reports, as recorded. */
const TRAFFIC_GAPS_S = [12, 5, 27, 9, 18, 30, 7];

const scratch = mkdtempSync(join(tmpdir(), 'replay-source-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let scratchFiles = 0;
function scratchFile(extension: string, content: string): string {
  const file = join(scratch, `recording-${++scratchFiles}${extension}`);
  writeFileSync(file, content);
  return file;
}

function recordingLogger() {
  const warnings: Array<{ fields: object; message: string }> = [];
  const logger: Logger = {
    info: () => undefined,
    warn: (fields, message) => warnings.push({ fields, message }),
    error: () => undefined,
  };
  return { logger, warnings };
}

interface Emitted {
  readonly observations: readonly Observation[];
  readonly at: number;
}

/** Starts a replay on a manual clock and collects what it sends. */
function play(options: Partial<ReplaySourceOptions> & { file: string }) {
  const manual = manualClock(START);
  const source = new ReplaySource({
    speed: 1,
    loop: false,
    maxFileBytes: 1_000_000,
    logger: recordingLogger().logger,
    clock: manual.clock,
    ...options,
  });
  const emitted: Emitted[] = [];
  source.start((observations, generatedAt) => emitted.push({ observations, at: generatedAt.getTime() }));
  return { source, emitted, ...manual };
}

/** Offsets from the start of the replay at which elements were sent. */
const offsets = (emitted: readonly Emitted[]) => emitted.map((e) => e.at - START);

const constructing = (options: Partial<ReplaySourceOptions> & { file: string }) => () =>
  new ReplaySource({ speed: 1, loop: false, maxFileBytes: 1_000_000, logger: recordingLogger().logger, ...options });

describe('ReplaySource: grouping', () => {
  it('the example recordings parse and conform to the element shapes', async () => {
    for (const [file, format] of [[airQuality, 'application/trig'], [traffic, 'text/turtle']] as const) {
      const report = await validateElement(new Parser({ format }).parse(readFileSync(file, 'utf8')));
      expect(report.violations, file).toEqual([]);
    }
  });

  it('plays each named graph of a TriG recording as one element, in time order', () => {
    const { emitted, advanceBy } = play({ file: airQuality });
    advanceBy(200_000);
    expect(emitted).toHaveLength(12);
    for (const element of emitted) {
      expect(element.observations.map((o) => o.id)).toEqual([
        'harbour-road-no2',
        'harbour-road-pm10',
        'harbour-road-temperature',
        'city-park-no2',
      ]);
    }
    const roadsideNo2 = emitted.map((e) => e.observations[0]!);
    expect(roadsideNo2[0]).toMatchObject({
      sensor: 'https://data.example.org/air-quality/sensors/harbour-road-no2',
      observedProperty: 'http://dd.eionet.europa.eu/vocabulary/aq/pollutant/8',
      featureOfInterest: 'https://data.example.org/air-quality/stations/harbour-road',
      simpleResult: 38.2,
      unit: 'http://qudt.org/vocab/unit/MicroGM-PER-M3',
    });
    expect(roadsideNo2.map((o) => o.phenomenonTime!.getTime() - AIR_QUALITY_FIRST)).toEqual(
      Array.from({ length: 12 }, (_, index) => index * 10_000),
    );
    expect(emitted[0]!.observations[2]).toMatchObject({ simpleResult: 6.4, unit: 'http://qudt.org/vocab/unit/DEG_C' });
  });

  it('plays the observations of a Turtle recording grouped by equal sosa:resultTime', () => {
    const { emitted, advanceBy } = play({ file: traffic });
    advanceBy(200_000);
    expect(emitted).toHaveLength(8);
    for (const element of emitted) {
      expect(element.observations.map((o) => o.featureOfInterest.split('/').pop())).toEqual([
        'ring-road-north',
        'bridge-street',
        'station-avenue',
      ]);
      expect(new Set(element.observations.map((o) => o.phenomenonTime!.getTime())).size).toBe(1);
      for (const observation of element.observations) expect(Number.isInteger(observation.simpleResult)).toBe(true);
    }
  });

  it('reads N-Quads like TriG, the format told by the extension or by the option', () => {
    const nquads = `<http://ex.org/g/2> <http://www.w3.org/ns/prov#generatedAtTime> "2026-01-01T00:00:04Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<http://ex.org/g/2#a> <http://www.w3.org/ns/sosa/madeBySensor> <http://ex.org/s> <http://ex.org/g/2> .
<http://ex.org/g/2#a> <http://www.w3.org/ns/sosa/observedProperty> <http://ex.org/p> <http://ex.org/g/2> .
<http://ex.org/g/2#a> <http://www.w3.org/ns/sosa/hasFeatureOfInterest> <http://ex.org/f> <http://ex.org/g/2> .
<http://ex.org/g/2#a> <http://www.w3.org/ns/sosa/hasSimpleResult> "2"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g/2> .
<http://ex.org/g/1> <http://www.w3.org/ns/prov#generatedAtTime> "2026-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
<http://ex.org/g/1#a> <http://www.w3.org/ns/sosa/madeBySensor> <http://ex.org/s> <http://ex.org/g/1> .
<http://ex.org/g/1#a> <http://www.w3.org/ns/sosa/observedProperty> <http://ex.org/p> <http://ex.org/g/1> .
<http://ex.org/g/1#a> <http://www.w3.org/ns/sosa/hasFeatureOfInterest> <http://ex.org/f> <http://ex.org/g/1> .
<http://ex.org/g/1#a> <http://www.w3.org/ns/sosa/hasSimpleResult> "1"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/g/1> .
`;
    for (const options of [{ file: scratchFile('.nq', nquads) }, { file: scratchFile('.txt', nquads), format: 'nquads' as const }]) {
      const { emitted, advanceBy } = play(options);
      advanceBy(10_000);
      expect(emitted.map((e) => e.observations[0]!.simpleResult)).toEqual([1, 2]);
      expect(offsets(emitted)).toEqual([0, 4_000]);
    }
  });

  it('places a graph without prov:generatedAtTime at the latest sosa:resultTime of its observations', () => {
    const observation = (id: string, time: string) =>
      `<#${id}> sosa:madeBySensor <http://ex.org/s>; sosa:observedProperty <http://ex.org/p>; sosa:hasFeatureOfInterest <http://ex.org/f>;
        sosa:hasSimpleResult 1; sosa:resultTime "${time}"^^xsd:dateTime.`;
    const file = scratchFile(
      '.trig',
      `@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>. @base <http://ex.org/>.
      <g1> { ${observation('a', '2026-01-01T00:00:00Z')} ${observation('b', '2026-01-01T00:00:03Z')} }
      <g2> { ${observation('c', '2026-01-01T00:00:08Z')} }`,
    );
    const { emitted, advanceBy } = play({ file });
    advanceBy(10_000);
    expect(emitted.map((e) => e.observations.map((o) => o.id))).toEqual([['a', 'b'], ['c']]);
    expect(offsets(emitted)).toEqual([0, 5_000]);
  });

  it('skips observations that cannot be read, with a warning, and counts them', () => {
    const file = scratchFile(
      '.ttl',
      `@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>.
      <http://ex.org/o1> sosa:madeBySensor <http://ex.org/s>; sosa:observedProperty <http://ex.org/p>;
        sosa:hasFeatureOfInterest <http://ex.org/f>; sosa:hasSimpleResult 1; sosa:resultTime "2026-01-01T00:00:00Z"^^xsd:dateTime.
      <http://ex.org/o2> sosa:madeBySensor <http://ex.org/s>; sosa:resultTime "2026-01-01T00:00:00Z"^^xsd:dateTime.`,
    );
    const { logger, warnings } = recordingLogger();
    const { source, emitted } = play({ file, logger });
    expect(emitted.map((e) => e.observations.map((o) => o.id))).toEqual([['o1']]);
    expect(warnings).toEqual([{ fields: expect.objectContaining({ file, subject: 'http://ex.org/o2' }), message: expect.any(String) }]);
    expect(source.health().recordsRejected).toBe(1);
  });
});

describe('ReplaySource: timing', () => {
  it('sends the first element at start, then keeps the recorded spacing divided by the speed', () => {
    const normal = play({ file: traffic });
    normal.advanceBy(200_000);
    const recorded = TRAFFIC_GAPS_S.reduce((times, gap) => [...times, times[times.length - 1]! + gap * 1000], [0]);
    expect(offsets(normal.emitted)).toEqual(recorded);

    const fast = play({ file: traffic, speed: 2 });
    expect(offsets(fast.emitted)).toEqual([0]);
    fast.advanceBy(200_000);
    expect(offsets(fast.emitted)).toEqual(recorded.map((offset) => offset / 2));

    const slow = play({ file: airQuality, speed: 0.5 });
    slow.advanceBy(500_000);
    expect(offsets(slow.emitted)).toEqual(Array.from({ length: 12 }, (_, index) => index * 20_000));
  });

  it('each element is sent with the time of publication', () => {
    const { emitted, advanceBy } = play({ file: airQuality, speed: 4 });
    advanceBy(5_000);
    expect(emitted.map((e) => new Date(e.at).toISOString())).toEqual([
      '2026-05-01T12:00:00.000Z',
      '2026-05-01T12:00:02.500Z',
      '2026-05-01T12:00:05.000Z',
    ]);
  });

  it('after a stall, it sends the late element at once and goes on from there, without a burst', () => {
    const manual = manualClock(START);
    const source = new ReplaySource({ file: airQuality, speed: 1, loop: false, maxFileBytes: 1_000_000, logger: recordingLogger().logger, clock: manual.clock });
    const sent: number[] = [];
    source.start((_observations, generatedAt) => {
      sent.push(generatedAt.getTime() - START);
      if (sent.length === 2) manual.block(35_000);
    });
    manual.advanceBy(70_000);
    expect(sent).toEqual([0, 10_000, 45_000, 55_000, 65_000]);
  });

  it('played once, it stops after the last element', () => {
    const { source, emitted, advanceBy, pending } = play({ file: airQuality });
    advanceBy(105_000);
    expect(emitted).toHaveLength(11);
    expect(source.health().state).toBe('ok');
    advanceBy(5_000);
    expect(emitted).toHaveLength(12);
    expect(source.health()).toEqual({ state: 'stopped', recordsRejected: 0 });
    expect(pending()).toBe(0);
    advanceBy(1_000_000);
    expect(emitted).toHaveLength(12);
  });

  it('looping, it starts again after the median recorded gap (divided by the speed)', () => {
    // traffic gaps 12, 5, 27, 9, 18, 30, 7 s: median 12 s, last element at 108 s
    const { source, emitted, advanceBy } = play({ file: traffic, loop: true, speed: 2 });
    advanceBy(54_000 + 6_000 - 1);
    expect(emitted).toHaveLength(8);
    advanceBy(1);
    expect(emitted).toHaveLength(9);
    expect(offsets(emitted).slice(7)).toEqual([54_000, 60_000]);
    expect(emitted[8]!.observations).toEqual(emitted[0]!.observations);
    advanceBy(6_000);
    expect(offsets(emitted).slice(9)).toEqual([66_000]);
    expect(source.health().state).toBe('ok');
  });

  it('stop() clears the timer, is idempotent, and reports stopped', () => {
    const { source, emitted, advanceBy, pending } = play({ file: airQuality, loop: true });
    advanceBy(10_000);
    expect(emitted).toHaveLength(2);
    source.stop();
    expect(pending()).toBe(0);
    source.stop();
    advanceBy(100_000);
    expect(emitted).toHaveLength(2);
    expect(source.health().state).toBe('stopped');
  });

  it('announces the recorded interval divided by the speed when it is regular, null otherwise', () => {
    expect(play({ file: airQuality }).source.expectedIntervalMs).toBe(10_000);
    expect(play({ file: airQuality, speed: 2 }).source.expectedIntervalMs).toBe(5_000);
    expect(play({ file: traffic }).source.expectedIntervalMs).toBeNull();
  });
});

describe('ReplaySource: timestamps', () => {
  it('drops the recorded resultTime (the publisher writes the publication time) and keeps it as phenomenonTime', () => {
    const { emitted } = play({ file: traffic });
    for (const observation of emitted[0]!.observations) {
      expect(observation.resultTime).toBeUndefined();
      expect(observation.phenomenonTime).toEqual(new Date('2026-03-14T07:45:00Z'));
    }
  });

  it('keeps a recorded phenomenonTime as it was', () => {
    const file = scratchFile(
      '.ttl',
      `@prefix sosa: <http://www.w3.org/ns/sosa/>. @prefix xsd: <http://www.w3.org/2001/XMLSchema#>.
      <http://ex.org/o1> sosa:madeBySensor <http://ex.org/s>; sosa:observedProperty <http://ex.org/p>;
        sosa:hasFeatureOfInterest <http://ex.org/f>; sosa:hasSimpleResult 1;
        sosa:phenomenonTime "2026-01-01T09:59:00Z"^^xsd:dateTime; sosa:resultTime "2026-01-01T10:00:00Z"^^xsd:dateTime.`,
    );
    const [observation] = play({ file }).emitted[0]!.observations;
    expect(observation).toEqual({
      id: 'o1',
      sensor: 'http://ex.org/s',
      observedProperty: 'http://ex.org/p',
      featureOfInterest: 'http://ex.org/f',
      simpleResult: 1,
      phenomenonTime: new Date('2026-01-01T09:59:00Z'),
    });
  });
});

describe('ReplaySource: resuming after the log\'s latest element', () => {
  /** Every element of a recording, in order, as one run played once sends them. */
  const recorded = (file: string) => {
    const { emitted, advanceBy } = play({ file });
    advanceBy(1_000_000);
    return emitted.map((e) => e.observations);
  };
  /** Observations as the log gives them back: with the publication's resultTime, in another order. */
  const asLogged = (observations: readonly Observation[]) =>
    observations.map((o) => ({ ...o, resultTime: new Date(START + 123_456) })).reverse();

  it('continues after the element the log ended with, not from the first', () => {
    const elements = recorded(traffic);
    const manual = manualClock(START);
    const source = new ReplaySource({ file: traffic, speed: 1, loop: false, maxFileBytes: 1_000_000, logger: recordingLogger().logger, clock: manual.clock });
    expect(source.resumeAfter(asLogged(elements[4]!))).toBe(true);
    const emitted: Array<readonly Observation[]> = [];
    source.start((observations) => emitted.push(observations));
    manual.advanceBy(1_000_000);
    expect(emitted).toEqual(elements.slice(5));
    expect(source.health().state).toBe('stopped');
  });

  it('after the last element, a recording played once is over and a looping one starts again', () => {
    const elements = recorded(airQuality);
    const last = asLogged(elements.at(-1)!);
    const once = new ReplaySource({ file: airQuality, speed: 1, loop: false, maxFileBytes: 1_000_000, logger: recordingLogger().logger, clock: manualClock(START).clock });
    once.resumeAfter(last);
    const sentOnce: Array<readonly Observation[]> = [];
    once.start((observations) => sentOnce.push(observations));
    expect(sentOnce).toEqual([]);
    expect(once.health().state).toBe('stopped');

    const looping = new ReplaySource({ file: airQuality, speed: 1, loop: true, maxFileBytes: 1_000_000, logger: recordingLogger().logger, clock: manualClock(START).clock });
    looping.resumeAfter(last);
    const sentLooping: Array<readonly Observation[]> = [];
    looping.start((observations) => sentLooping.push(observations));
    expect(sentLooping).toEqual([elements[0]]);
  });

  it('starts from the first element, with a warning, when the log ended with an element the recording does not hold', () => {
    const elements = recorded(traffic);
    const { logger, warnings } = recordingLogger();
    const source = new ReplaySource({ file: traffic, speed: 1, loop: false, maxFileBytes: 1_000_000, logger, clock: manualClock(START).clock });
    const foreign = elements[2]!.map((o) => ({ ...o, simpleResult: 999_999 }));
    expect(source.resumeAfter(foreign)).toBe(false);
    expect(warnings.map((w) => w.message)).toEqual(["Replay: the log's latest element is not in the recording; it starts from its first element"]);
    const emitted: Array<readonly Observation[]> = [];
    source.start((observations) => emitted.push(observations));
    expect(emitted).toEqual([elements[0]]);
  });
});

describe('ReplaySource: recordings it refuses at start-up', () => {
  const observation = (time: string) =>
    `<http://ex.org/o> <http://www.w3.org/ns/sosa/madeBySensor> <http://ex.org/s>; <http://www.w3.org/ns/sosa/observedProperty> <http://ex.org/p>;
      <http://www.w3.org/ns/sosa/hasFeatureOfInterest> <http://ex.org/f>; <http://www.w3.org/ns/sosa/hasSimpleResult> 1${time}.`;

  it('a missing file', () => {
    const file = join(scratch, 'missing.trig');
    expect(constructing({ file })).toThrow(ReplayFileError);
    expect(constructing({ file })).toThrow(`Recording ${file} does not exist`);
  });

  it('a file above the size limit', () => {
    expect(constructing({ file: airQuality, maxFileBytes: 1_000 })).toThrow(/air-quality-recording\.trig is \d+ bytes, more than the limit of 1000/);
  });

  it('a syntax error, with its line', () => {
    const file = scratchFile('.ttl', `@prefix sosa: <http://www.w3.org/ns/sosa/>.\n\n<http://ex.org/o> sosa:madeBySensor <http://ex.org/s>;\n  sosa:hasSimpleResult oops.\n`);
    expect(constructing({ file })).toThrow(ReplayFileError);
    expect(constructing({ file })).toThrow(new RegExp(`^Recording ${file} is not valid turtle at line 4: `));
  });

  it('a file without observations', () => {
    const file = scratchFile('.ttl', '<http://ex.org/a> <http://ex.org/b> <http://ex.org/c>.\n');
    expect(constructing({ file })).toThrow(`Recording ${file} holds no SOSA observations`);
  });

  it('elements without a time', () => {
    const ungraphed = scratchFile('.ttl', observation(''));
    expect(constructing({ file: ungraphed })).toThrow(`Recording ${ungraphed}: observation o has no sosa:resultTime`);
    const graphed = scratchFile('.trig', `<http://ex.org/g> { ${observation('')} }`);
    expect(constructing({ file: graphed })).toThrow(
      `Recording ${graphed}: element <http://ex.org/g> has neither a prov:generatedAtTime nor a sosa:resultTime`,
    );
  });

  it('a file whose format its extension does not tell', () => {
    const file = scratchFile('.rdf', '');
    expect(constructing({ file })).toThrow(/set its format/);
  });

  it('a loop over elements that are not spread in time', () => {
    const file = scratchFile('.ttl', observation('; <http://www.w3.org/ns/sosa/resultTime> "2026-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'));
    expect(constructing({ file, loop: true })).toThrow(/cannot loop/);
    expect(constructing({ file, loop: false })).not.toThrow();
  });
});
