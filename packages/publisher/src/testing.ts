import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from './clock-and-logger.js';
import type { PublisherConfig } from './config/config-schema.js';
import { loadConfig } from './config/load-config.js';
import type { Observation } from './model/observation.js';
import { streamIri } from '@rdf-stream/protocol';
import type { Transport } from './publish/sse/push-subscriber.js';
import type { StreamHub } from './publish/stream-hub.js';
import { createPublisher, type Publisher, type PublisherOptions } from './publisher.js';
import type { ElementSource } from './source/element-source.js';
import { ManualSource } from './source/manual-source.js';
import { ParkingSimulator } from './source/parking-simulator.js';

import { sampleObservations } from './testing/sample-observations.js';
import { freePort } from './testing/free-port.js';

export { type ManualClock, manualClock } from './testing/manual-clock.js';
export { sampleObservations } from './testing/sample-observations.js';
export { freePort } from './testing/free-port.js';
export { syntheticHistory, type SyntheticHistoryOptions } from './testing/synthetic-history.js';
export { elementIds, type EventSourceMessage, openSse, type SseConnection } from './testing/sse-reader.js';

/**
 * What a test (of this repository, or of a program built on the publisher) starts: a publisher
 * in this process, listening on 127.0.0.1 on a port the system picked, with the defaults below.
 */
export interface TestPublisherOptions {
  /** Command-line flags, after the defaults (so they override them), e.g. `['--page-elements', '3']`. */
  readonly flags?: readonly string[];
  /** Runs once the publisher is built and started, before it listens (what a slow start-up does). */
  readonly beforeListen?: () => Promise<void>;
  /**
   * Where the first stream's elements come from: `manual` (default) publishes only what `push`
   * is given; `simulator` is the parking simulator, one element every `intervalMs` on `clock`;
   * or a source of the caller's (e.g. a `WebApiSource` polling the test's own upstream), which
   * `restart` stops and starts again.
   */
  readonly source?: 'manual' | 'simulator' | ElementSource;
  /**
   * The simulator's clock and the one the history's grace period is measured on: the wall clock
   * by default, or a `manualClock()`'s (elements come as the test advances it).
   */
  readonly clock?: Clock;
  /** Milliseconds between two elements, as announced to caches (and the simulator's period); null: irregular. Default 5000. */
  readonly intervalMs?: number | null;
  /**
   * `memory` (default): the stream is lost at `close` and `restart`. `file`: the log is kept in a
   * temporary folder across `restart`, and removed by `close`.
   */
  readonly log?: 'memory' | 'file';
  /**
   * A configuration file's text (YAML; JSON with a `fileName` ending in `.json`) declaring the
   * streams and their real sources, instead of the one stream fed by `source`. Its data folder
   * and the configuration are kept in a temporary folder, with `files` beside them.
   */
  readonly config?: string;
  readonly fileName?: string;
  /** Files written beside the configuration file (a replay's data, a mapping), by name. */
  readonly files?: Readonly<Record<string, string>>;
  /** Environment variables the configuration reads (an ingest stream's `tokenEnv`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Answers `/health` and load shedding's health check (see `PublisherOptions.healthCheck`). */
  readonly healthCheck?: () => Promise<boolean>;
  /** Listens on this port instead of a free one. */
  readonly port?: number;
  /** Where the live page and the browser client are read from (see `PublisherOptions.pageAssetsDirectory`). */
  readonly pageAssetsDirectory?: string;
  /** Where the Solid notification channels are described (see `PublisherOptions.channelStore`); kept across `restart`. */
  readonly channelStore?: PublisherOptions['channelStore'];
}

/** Which of a stream's readers a count is about. */
export interface ReaderFilter {
  /** The stream's id; default: the first stream's. */
  readonly stream?: string;
  /** Push subscribers of one transport only; default: SSE and WebSocket together. */
  readonly transport?: Transport;
}

export interface TestPublisher {
  readonly publisher: Publisher;
  readonly config: PublisherConfig;
  /** `http://127.0.0.1:{port}`, the publisher's base URL. */
  readonly url: string;
  /** The first stream's IRI, `{url}/streams/{id}`: where clients subscribe. */
  readonly streamUrl: string;
  /** The first stream's hub. */
  readonly hub: StreamHub;
  /** The first stream's source: a `ManualSource` unless `source` or `config` said otherwise. */
  readonly source: ElementSource;
  /**
   * Publishes one element on the first stream (generated now, or at `generatedAt`: elements are
   * appended in the order of their generation) and resolves with its sequence number once
   * `/latest` serves it and its broadcast has been written to every live subscriber. Numbers
   * stand for one parking observation each (`sampleObservations`); default `[12, 34]`.
   */
  push(observations?: readonly Observation[] | readonly number[], generatedAt?: Date): Promise<number>;
  /** Push subscribers (SSE and WebSocket) connected now. */
  subscribers(filter?: ReaderFilter): number;
  /**
   * Resolves as soon as exactly `count` push subscribers are connected (at once if they are):
   * what a test awaits after opening or closing a stream, instead of polling the server. It
   * watches the publisher running when it is called (not the one a later `restart` starts).
   */
  untilSubscribers(count: number, filter?: ReaderFilter): Promise<void>;
  /** Long-poll requests (`Prefer: wait`) held now. */
  waiting(filter?: Pick<ReaderFilter, 'stream'>): number;
  /** Resolves as soon as exactly `count` long-poll requests are held (at once if they are). */
  untilWaiting(count: number, filter?: Pick<ReaderFilter, 'stream'>): Promise<void>;
  /** Shuts the publisher down and starts it again on the same port (with a `file` log or a `config`, the same data). */
  restart(): Promise<void>;
  /** Shuts the publisher down (gracefully: see `Publisher.shutdown`) and removes its temporary folder. */
  close(): Promise<void>;
}

/**
 * The publisher runs in the test's own process, whose code (a tight loop of pushes, a query
 * engine loading) blocks the event loop as no real load would, and on a machine busy with other
 * test files: no load shedding, neither by event-loop turn (the shedder) nor by event-loop
 * delay (under-pressure: a CI run on two cores once saw a subscription refused 503
 * `PUB_ERR_OVERLOADED` by it), unless a test turns it on (its flags come after these). The
 * tests of shedding make the publisher unhealthy instead (`healthCheck`).
 */
const inProcess = ['--log-level', 'silent', '--max-event-loop-turn-ms', '0', '--max-event-loop-delay-ms', '0'];

const isValues = (items: readonly Observation[] | readonly number[]): items is readonly number[] => typeof items[0] === 'number';

/**
 * Starts a real publisher on a real socket in this process: by default one stream, fed by
 * `push`, kept in memory.
 */
export async function startTestPublisher(options: TestPublisherOptions = {}): Promise<TestPublisher> {
  const dir = options.config !== undefined || options.log === 'file' ? mkdtempSync(join(tmpdir(), 'rdf-stream-test-publisher-')) : undefined;
  const argv = ['--host', '127.0.0.1', ...inProcess];
  if (options.config !== undefined) {
    const file = join(dir!, options.fileName ?? 'publisher.yaml');
    writeFileSync(file, options.config);
    for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir!, name), text);
    argv.push('--config', file, '--data-dir', join(dir!, 'data'));
  } else {
    argv.push('--log', options.log ?? 'memory', ...(dir === undefined ? [] : ['--data-dir', join(dir, 'data')]));
  }
  const intervalMs = options.intervalMs === undefined ? 5_000 : options.intervalMs;
  // A port named before the publisher is built, so that its IRIs name it (and `restart` finds it
  // again). Not `--port 0`: the socket it binds first is handed over without its listen backlog.
  argv.push('--port', String(options.port ?? (await freePort())), ...(options.flags ?? []));
  const config = loadConfig({ argv, env: { ...options.env } });
  const firstId = config.streams[0]!.id;
  const url = config.baseUrl;
  const streamUrl = streamIri(url, firstId);
  const makeSource = (): ElementSource | undefined => {
    if (options.config !== undefined) return undefined;
    if (typeof options.source === 'object') return options.source;
    if (options.source !== 'simulator') return new ManualSource(intervalMs);
    return new ParkingSimulator({
      streamIri: streamUrl,
      facilities: config.facilities,
      intervalMs: intervalMs ?? 5_000,
      seed: config.seed,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  };
  const open = async () => {
    const source = makeSource();
    const publisher = await createPublisher(config, {
      ...(source === undefined ? {} : { source }),
      ...(options.healthCheck === undefined ? {} : { healthCheck: options.healthCheck }),
      ...(options.pageAssetsDirectory === undefined ? {} : { pageAssetsDirectory: options.pageAssetsDirectory }),
      ...(options.channelStore === undefined ? {} : { channelStore: options.channelStore }),
      ...(options.clock === undefined ? {} : { now: options.clock.now }),
      processMetrics: false,
    });
    await publisher.start();
    await options.beforeListen?.();
    await publisher.listen();
    return publisher;
  };

  let publisher = await open().catch((error: unknown) => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const hubOf = (stream = firstId) => {
    const hub = publisher.hubs.get(stream);
    if (hub === undefined) throw new Error(`no stream "${stream}" (streams: ${[...publisher.hubs.keys()].join(', ')})`);
    return hub;
  };
  const countOf = (filter: ReaderFilter = {}) => {
    const { broadcaster } = hubOf(filter.stream);
    return filter.transport === undefined ? broadcaster.size : broadcaster.sizeOf(filter.transport);
  };
  /** Resolves once `reached()` holds, checked now and after each change that `watch` reports. */
  const until = (reached: () => boolean, watch: (listener: () => void) => () => void) =>
    new Promise<void>((resolve) => {
      if (reached()) return resolve();
      const stop = watch(() => {
        if (!reached()) return;
        stop();
        resolve();
      });
    });

  return {
    get publisher() {
      return publisher;
    },
    config,
    url,
    streamUrl,
    get hub() {
      return hubOf();
    },
    get source() {
      return hubOf().source;
    },
    async push(observations = [12, 34], generatedAt = new Date()) {
      const hub = hubOf();
      const element = await hub.publish(isValues(observations) ? sampleObservations(streamUrl, observations) : observations, generatedAt);
      await hub.broadcaster.notify();
      return element.seq;
    },
    subscribers: countOf,
    waiting: (filter = {}) => hubOf(filter.stream).waiters.size,
    untilSubscribers: (count, filter = {}) =>
      until(
        () => countOf(filter) === count,
        (listener) => hubOf(filter.stream).broadcaster.onSizeChanged(listener),
      ),
    untilWaiting: (count, filter = {}) =>
      until(
        () => hubOf(filter.stream).waiters.size === count,
        (listener) => hubOf(filter.stream).waiters.onSizeChanged(listener),
      ),
    async restart() {
      await publisher.shutdown();
      publisher = await open();
    },
    async close() {
      await publisher.shutdown();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
