import { randomBytes } from 'node:crypto';
import { type Clock, type Logger, monotonicClock } from '../../clock-and-logger.js';

/**
 * The two commands a lease sends. A connected node-redis client has them; give it one that never
 * runs blocking reads (`XREAD BLOCK` would hold a renewal behind it for `redisReadBlockMs`), best
 * the connection the log appends on, so that an append sent before the release is judged before it.
 */
export interface LeaseCommands {
  set(key: string, value: string, options: { condition: 'NX'; expiration: { type: 'PX'; value: number } }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export interface SourceLeaseOptions {
  readonly redis: LeaseCommands;
  /** The stream's lease key (`streamKeys(prefix, id).lease`). */
  readonly key: string;
  /** For log lines. */
  readonly streamId: string;
  /** Milliseconds the lease lasts unrenewed (`sourceLeaseMs`); renewals and retries come every third of it. */
  readonly leaseMs: number;
  /**
   * Milliseconds before the lease would expire on Redis at which this instance already counts it
   * lost, for the two clocks' drift and the time a lost holder takes to stop its source;
   * default a tenth of `leaseMs`.
   */
  readonly safetyMarginMs?: number;
  readonly logger: Logger;
  /** Time and timers; default `monotonicClock` (a wall clock set back would stretch the lease). */
  readonly clock?: Clock;
}

/** Why a held lease was lost: another instance holds the key, or no renewal succeeded in time. */
export type LeaseLossReason = 'taken' | 'unrenewed';

/** A lease command that failed (Redis unreachable, refused, or an answer a lease script never gives). */
export class SourceLeaseError extends Error {
  override readonly name = 'SourceLeaseError';
  constructor(
    readonly streamId: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`stream "${streamId}": ${message}`, options);
  }
}

/** PEXPIRE only if the key still holds our token: 1 when extended, 0 when another holds it or it expired. */
const RENEW_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
/** DEL only if the key still holds our token: never releases another holder's lease. */
const RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/** Random bytes of a token: unguessable, so that no other instance can renew or release ours. */
const TOKEN_BYTES = 18;

type State =
  | { readonly kind: 'stopped' }
  | { readonly kind: 'seeking' }
  | { readonly kind: 'holding'; readonly token: string; renewedAt: number };

/**
 * Which instance runs a stream's source: the one whose token is in the stream's lease key
 * (`SET key token NX PX leaseMs`). The holder renews every third of the lease with a
 * compare-and-extend script; the others try to acquire it as often.
 *
 * The holder counts the lease lost `safetyMarginMs` before Redis could hand it to another:
 * Redis starts a lease's time when it runs the command, which is after it was sent, so a lease
 * renewed by a command sent at `t` lasts at least until `t + leaseMs` on Redis, and this instance
 * stops at `t + leaseMs − safetyMarginMs` on its own clock, whether or not Redis answers. Its
 * `token` is then undefined; the log's appends carry the token as their fence, so that an
 * instance paused past that point is refused by Redis itself.
 */
export class SourceLease {
  readonly #options: SourceLeaseOptions;
  readonly #clock: Clock;
  readonly #retryMs: number;
  readonly #safetyMarginMs: number;
  readonly #acquiredListeners: Array<(token: string) => void> = [];
  readonly #lostListeners: Array<(reason: LeaseLossReason) => void> = [];
  #state: State = { kind: 'stopped' };
  /** The next renewal or acquisition attempt. */
  #tickTimer: unknown;
  /** When the held lease counts as lost. */
  #deadlineTimer: unknown;
  /** A command in flight: at most one at a time, so that a slow Redis is not sent a queue of them. */
  #inFlight: Promise<void> | undefined;
  #lastError: SourceLeaseError | undefined;
  #answered = false;

  constructor(options: SourceLeaseOptions) {
    if (!(options.leaseMs > 0)) throw new RangeError(`leaseMs must be positive, got ${options.leaseMs}`);
    this.#options = options;
    this.#clock = options.clock ?? monotonicClock;
    this.#retryMs = Math.max(1, Math.floor(options.leaseMs / 3));
    this.#safetyMarginMs = options.safetyMarginMs ?? Math.ceil(options.leaseMs / 10);
    if (!(this.#safetyMarginMs >= 0 && this.#safetyMarginMs < options.leaseMs - this.#retryMs)) {
      throw new RangeError(`safetyMarginMs must leave at least one renewal within the lease, got ${this.#safetyMarginMs} of ${options.leaseMs}`);
    }
  }

  /** Our token while we hold the lease (the fencing token of the log's appends); undefined otherwise. */
  get token(): string | undefined {
    return this.#state.kind === 'holding' ? this.#state.token : undefined;
  }

  /** The last command's failure while it lasts (cleared by the next answer from Redis). */
  get lastError(): SourceLeaseError | undefined {
    return this.#lastError;
  }

  /** Whether Redis has answered a lease command yet: until then, nobody knows who runs the source. */
  get answered(): boolean {
    return this.#answered;
  }

  /** Milliseconds between two renewals, or two acquisition attempts: a third of the lease. */
  get retryMs(): number {
    return this.#retryMs;
  }

  /** Calls `listener` with the new token each time this instance acquires the lease. */
  onAcquired(listener: (token: string) => void): void {
    this.#acquiredListeners.push(listener);
  }

  /** Calls `listener` each time a held lease is lost (not when `stop` releases it). */
  onLost(listener: (reason: LeaseLossReason) => void): void {
    this.#lostListeners.push(listener);
  }

  /** Tries to acquire the lease now, then every `retryMs` until it holds it; idempotent. */
  start(): void {
    if (this.#state.kind !== 'stopped') return;
    this.#state = { kind: 'seeking' };
    this.#tick();
  }

  /**
   * Stops renewing and releases the lease if held (compare-and-delete), so that another instance
   * takes the source over at its next attempt instead of after the lease. Resolves once Redis
   * answered, or after `retryMs` without an answer; never rejects.
   */
  async stop(): Promise<void> {
    const held = this.token;
    this.#state = { kind: 'stopped' };
    this.#clearTimers();
    // An acquisition in flight may succeed: it releases what it got when it sees the state (`#acquire`).
    const inFlight = this.#inFlight;
    if (held !== undefined) {
      await this.#bounded(this.#release(held));
      this.#options.logger.info({ stream: this.#options.streamId }, 'source lease released');
    }
    if (inFlight !== undefined) await this.#bounded(inFlight);
  }

  #tick(): void {
    this.#tickTimer = this.#clock.setTimeout(() => this.#tick(), this.#retryMs);
    if (this.#inFlight !== undefined) return;
    const state = this.#state;
    const attempt = state.kind === 'holding' ? this.#renew(state) : state.kind === 'seeking' ? this.#acquire() : undefined;
    if (attempt === undefined) return;
    const settled = attempt
      // Redis's failures are handled where they happen; this is a listener's own error.
      .catch((error: unknown) => this.#options.logger.error({ stream: this.#options.streamId, err: error }, 'source lease listener failed'))
      .finally(() => {
        if (this.#inFlight === settled) this.#inFlight = undefined;
      });
    this.#inFlight = settled;
  }

  async #acquire(): Promise<void> {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const sentAt = this.#clock.now();
    let reply: unknown;
    try {
      reply = await this.#options.redis.set(this.#options.key, token, {
        condition: 'NX',
        expiration: { type: 'PX', value: this.#options.leaseMs },
      });
    } catch (error) {
      this.#failed('acquiring the source lease failed', error);
      return;
    }
    this.#heard();
    if (reply !== 'OK') return; // another instance holds it
    if (this.#state.kind !== 'seeking') {
      // Stopped meanwhile: give it back rather than leave the source unrun for a whole lease.
      await this.#release(token);
      return;
    }
    const deadlineAt = sentAt + this.#options.leaseMs - this.#safetyMarginMs;
    // An answer this late leaves no time to run the source: give it back.
    if (this.#clock.now() >= deadlineAt) {
      await this.#release(token);
      return;
    }
    this.#state = { kind: 'holding', token, renewedAt: sentAt };
    this.#armDeadline(deadlineAt);
    this.#options.logger.info({ stream: this.#options.streamId, leaseMs: this.#options.leaseMs }, 'source lease acquired: this instance runs the source');
    for (const listener of this.#acquiredListeners) listener(token);
  }

  async #renew(holding: Extract<State, { kind: 'holding' }>): Promise<void> {
    const sentAt = this.#clock.now();
    let reply: unknown;
    try {
      reply = await this.#options.redis.eval(RENEW_SCRIPT, {
        keys: [this.#options.key],
        arguments: [holding.token, String(this.#options.leaseMs)],
      });
    } catch (error) {
      this.#failed('renewing the source lease failed', error);
      return;
    }
    this.#heard();
    if (this.#state !== holding) {
      // Counted lost (or stopped) while the command was out, yet Redis extended it: give it back
      // rather than leave the source unrun for a whole lease.
      if (reply === 1) await this.#release(holding.token);
      return;
    }
    if (reply === 1) {
      holding.renewedAt = sentAt;
      this.#armDeadline(sentAt + this.#options.leaseMs - this.#safetyMarginMs);
    } else {
      this.#lose('taken');
    }
  }

  async #release(token: string): Promise<void> {
    try {
      await this.#options.redis.eval(RELEASE_SCRIPT, { keys: [this.#options.key], arguments: [token] });
    } catch (error) {
      // The key lapses by itself within the lease.
      this.#failed('releasing the source lease failed', error);
    }
  }

  #armDeadline(deadlineAt: number): void {
    if (this.#deadlineTimer !== undefined) this.#clock.clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = this.#clock.setTimeout(() => {
      this.#deadlineTimer = undefined;
      if (this.#state.kind === 'holding') this.#lose('unrenewed');
    }, Math.max(0, deadlineAt - this.#clock.now()));
  }

  #lose(reason: LeaseLossReason): void {
    const holding = this.#state;
    if (holding.kind !== 'holding') return;
    this.#state = { kind: 'seeking' };
    if (this.#deadlineTimer !== undefined) this.#clock.clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    const sinceRenewalMs = this.#clock.now() - holding.renewedAt;
    this.#options.logger.warn(
      { stream: this.#options.streamId, reason, sinceRenewalMs, ...(this.#lastError === undefined ? {} : { err: this.#lastError }) },
      reason === 'taken' ? 'source lease lost: another instance holds it' : 'source lease lost: not renewed in time, the source stops',
    );
    for (const listener of this.#lostListeners) listener(reason);
  }

  #failed(message: string, cause: unknown): void {
    const first = this.#lastError === undefined;
    this.#lastError = new SourceLeaseError(this.#options.streamId, `${message}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    // Once per outage: a retry every third of a lease would otherwise flood the log.
    if (first) this.#options.logger.warn({ stream: this.#options.streamId, err: this.#lastError }, message);
  }

  #heard(): void {
    this.#answered = true;
    this.#lastError = undefined;
  }

  #clearTimers(): void {
    if (this.#tickTimer !== undefined) this.#clock.clearTimeout(this.#tickTimer);
    if (this.#deadlineTimer !== undefined) this.#clock.clearTimeout(this.#deadlineTimer);
    this.#tickTimer = undefined;
    this.#deadlineTimer = undefined;
  }

  /**
   * `work`, or at most `retryMs` of it: an unreachable Redis holds a command until the client
   * gives up, but releasing is a courtesy (a lease lapses by itself), not worth a slow shutdown.
   */
  #bounded(work: Promise<void>): Promise<void> {
    let timer: unknown;
    const lapsed = new Promise<void>((resolve) => (timer = this.#clock.setTimeout(resolve, this.#retryMs)));
    return Promise.race([work, lapsed]).finally(() => this.#clock.clearTimeout(timer));
  }
}
