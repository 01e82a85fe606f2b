import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { streamPathPattern } from '@rdf-stream/protocol';
import { PublisherError } from '../errors.js';
import { problemBody, PROBLEM_JSON } from './problem.js';
import { eventStreamHeaders, shedStream } from './sse-headers-and-retries.js';

export interface LoadShedderOptions {
  /** Mean event-loop delay (ms) over a sample above which new requests are shed; 0: never. */
  readonly maxEventLoopTurnMs: number;
  /** Milliseconds shedding lasts after the last overloaded sample (so that it does not flap). */
  readonly shedHoldMs: number;
  readonly retryAfterSeconds: number;
  /** Least `retry:` sent to a shed EventSource (its retry is jittered above it). */
  readonly sseRetryMs: number;
  /** Counts a request answered here (metrics). */
  readonly onShed?: (method: string, status: number) => void;
}

/** Milliseconds between two samples of the event loop's delay. */
const SAMPLE_INTERVAL_MS = 500;
/** The histogram's own resolution (ms), subtracted from its mean. */
const RESOLUTION_MS = 10;
/** Milliseconds an operator's connection (/health, /metrics) is not read after an answer while shedding. */
const OPERATOR_PARK_MS = 1_000;

const operatorPath = /^\/(?:health|metrics)(?:\?|$)/;
const eventsPath = streamPathPattern('events', 'patches');

/**
 * Sheds new requests when the event loop is saturated, before any routing, with pre-built bytes.
 *
 * What saturates first is not the CPU but accepting connections: libuv accepts one connection
 * per event-loop turn, and a turn serves every ready connection. With a few thousand busy
 * keep-alive connections a turn takes tens of milliseconds, so new connections (a crowd
 * arriving, an operator's probe) wait in the kernel's accept queue for seconds while the
 * event-loop delay looks harmless. Measured: probes on fresh connections answered after 10 s
 * or never, behind a flood of 2 000 connections (docs/reliability.md).
 *
 * So while shedding, requests are answered 503 with `Retry-After` (cheaper than a 200: one
 * write of fixed bytes), and then their connection is *parked*: not read again until the time
 * `Retry-After` asked for has passed. A client that honours it loses nothing; one that does not
 * (a flood) can no longer make the publisher work, turns get short again and new connections
 * are accepted at once. Closing connections instead was measured worse: a flood reconnects at
 * once and the accept queue stays long (probes p99 2.2 s against 0.4 s parked).
 * A new EventSource gets a 200 stream with a jittered `retry:` and a `shed` event (it would give
 * up for good on a 503); `/health` and `/metrics` are answered as usual, and their connection
 * parked for a second, so operators can see why without an operator's flood costing more.
 * Established SSE streams are not requests: they keep flowing.
 */
export class LoadShedder {
  readonly #options: LoadShedderOptions;
  readonly #histogram: IntervalHistogram | undefined;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #problem: Buffer;
  #shedUntil = 0;
  #shedding = false;
  /** Samples before this moment (epoch ms) are dropped: see `forgetStartUp`. */
  #forgetUntil = 0;
  /** Requests shed since start (count). */
  shed = 0;

  constructor(options: LoadShedderOptions) {
    this.#options = options;
    this.#problem = Buffer.from(
      JSON.stringify(problemBody(new PublisherError('PUB_ERR_OVERLOADED', `The publisher is saturated: try again in ${options.retryAfterSeconds} s.`))),
    );
    if (options.maxEventLoopTurnMs === 0) return;
    this.#histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.#histogram.enable();
    this.#timer = setInterval(() => this.#sample(), SAMPLE_INTERVAL_MS);
    this.#timer.unref();
  }

  get shedding(): boolean {
    return this.#shedding;
  }

  /** Answers `request` if the publisher is shedding; false when it should be served as usual. */
  answer(request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.#shedding) return false;
    const url = request.url ?? '/';
    if (operatorPath.test(url)) {
      park(response, request.socket, OPERATOR_PARK_MS);
      return false;
    }
    this.shed++;
    if (request.method === 'GET' && eventsPath.test(url)) {
      const { retryAfter, body } = shedStream('PUB_ERR_OVERLOADED', this.#options.sseRetryMs, this.#options.retryAfterSeconds * 1000);
      response.writeHead(200, { ...eventStreamHeaders, 'access-control-allow-origin': '*', 'retry-after': retryAfter });
      response.end(body);
      this.#options.onShed?.('GET', 200);
      return true;
    }
    park(response, request.socket, this.#options.retryAfterSeconds * 1000);
    response.writeHead(503, {
      'content-type': PROBLEM_JSON,
      'content-length': this.#problem.length,
      'cache-control': 'no-store',
      'access-control-allow-origin': '*',
      'retry-after': String(this.#options.retryAfterSeconds),
    });
    response.end(request.method === 'HEAD' ? undefined : this.#problem);
    this.#options.onShed?.(request.method ?? 'OTHER', 503);
    return true;
  }

  /**
   * Forgets the event loop's delays so far and stops any shedding they caused: called when the
   * server starts listening, so that the publisher's own start-up (building its streams, loading
   * shapes and contexts, compiling its modules), which holds the loop before anyone can ask,
   * does not make it shed its first requests for `shedHoldMs`.
   */
  forgetStartUp(): void {
    this.#histogram?.reset();
    this.#shedUntil = 0;
    this.#shedding = false;
    // A turn that held the loop is recorded only when the loop runs again, possibly after the
    // next sample: the samples of the next two intervals are dropped too.
    this.#forgetUntil = Date.now() + 2 * SAMPLE_INTERVAL_MS;
  }

  close(): void {
    clearInterval(this.#timer);
    this.#histogram?.disable();
  }

  #sample(): void {
    const histogram = this.#histogram!;
    const meanDelayMs = Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS);
    histogram.reset();
    const now = Date.now();
    if (now < this.#forgetUntil) return;
    if (meanDelayMs > this.#options.maxEventLoopTurnMs) this.#shedUntil = now + this.#options.shedHoldMs;
    this.#shedding = now < this.#shedUntil;
  }
}

const parked = new WeakSet<Socket>();

/** Once `response` is sent, reads nothing more from its connection for `ms` (see `LoadShedder`). */
function park(response: ServerResponse, socket: Socket, ms: number): void {
  response.once('finish', () => {
    if (socket.destroyed || parked.has(socket)) return;
    parked.add(socket);
    socket.pause();
    const release = () => {
      clearTimeout(timer);
      parked.delete(socket);
      socket.off('close', release);
    };
    const timer = setTimeout(() => {
      release();
      if (!socket.destroyed) socket.resume();
    }, ms);
    timer.unref();
    socket.once('close', release);
  });
}
