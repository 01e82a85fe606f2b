/** Longest a request made right after its answer waits for the burst of answers to end (ms). */
export const MAX_BURST_WAIT_MS = 500;
/** A worker's burst is over when it has read no answer for so long (ms), though requests are still in flight. */
export const BURST_QUIET_MS = 50;

/** The fleet's other workers, through the parent process (`FleetBurstBarrier`): see `AnswerBurst`. */
export interface FleetBurstGate {
  /** This worker's burst is over: its requests wait for the others'. */
  over(): void;
  /** This worker's burst, said over, waits no more: it goes on (an answer came), or its requests went at the limit. */
  withdrawn(): void;
}

/**
 * The answers a worker's pollers are reading, and when their burst ends. Thousands of clients
 * share a worker process, and the workers share the cores with the publisher, where on their own
 * machines they would not: a long-poller that sends its next request as soon as its answer is
 * read (a write to a loopback socket costs tens of µs, the publisher's end taking the bytes in
 * the same system call) makes every client of its worker whose answer came after it wait for
 * that write, and the publisher, still answering the others, wait for a core; all of them count
 * it as latency. A request that follows its answer at once therefore waits (`ended`) until the
 * burst of answers is over: every request of the worker's that was in flight has its answer
 * (`sent`, `answered`), or none has been read for `quietMs` (a request held for a later element
 * stays in flight); with a `gate` (long-polling), until every worker's burst is over, for one
 * worker's requests would take the cores while the publisher still answers another's clients.
 * At most `maxWaitMs` after the first request waited, whatever comes; the requests then go out
 * in the order they were made. It misses nothing by it: an element published meanwhile is the
 * answer to the request, at once, and its latency counts the wait.
 */
export class AnswerBurst {
  readonly #maxWaitMs: number;
  readonly #quietMs: number;
  #gate: FleetBurstGate | undefined;
  #inFlight = 0;
  #waiting: Array<() => void> = [];
  #firstWaitedAtMs = 0;
  #lastAnsweredAtMs = 0;
  /** The gate was told this burst is over, and not told since that it goes on. */
  #toldOver = false;
  #check: { readonly immediate: NodeJS.Immediate } | { readonly timeout: NodeJS.Timeout } | undefined;

  constructor(options: { readonly maxWaitMs?: number; readonly quietMs?: number; readonly gate?: FleetBurstGate } = {}) {
    this.#maxWaitMs = options.maxWaitMs ?? MAX_BURST_WAIT_MS;
    this.#quietMs = options.quietMs ?? BURST_QUIET_MS;
    this.#gate = options.gate;
  }

  /** Requests in flight: sent and neither answered nor failed. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** From now on, a burst over here waits for the fleet's (see the class). */
  set gate(gate: FleetBurstGate) {
    this.#gate = gate;
  }

  /** Counts a request sent: its answer (or failure) must be told to `answered` once. */
  sent(): void {
    this.#inFlight++;
  }

  /** Counts an answer read, or a request that failed: the burst goes on, unless it was the last in flight. */
  answered(): void {
    if (this.#inFlight > 0) this.#inFlight--;
    this.#lastAnsweredAtMs = Date.now();
    if (this.#waiting.length === 0) return;
    if (this.#inFlight === 0) this.#checkSoon(0);
    else if (this.#toldOver) {
      this.#withdraw();
      this.#checkSoon(this.#quietMs);
    }
  }

  /** Every worker's burst is over (the parent says so): the requests waiting go, if this worker's burst is over too. */
  fleetOver(): void {
    if (!this.#toldOver) return;
    this.#toldOver = false;
    this.#release();
  }

  /** Resolves once the burst of answers is over (see the class). */
  ended(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#waiting.length === 0) {
        this.#firstWaitedAtMs = Date.now();
        this.#lastAnsweredAtMs = Math.max(this.#lastAnsweredAtMs, this.#firstWaitedAtMs);
        this.#checkSoon(this.#inFlight === 0 ? 0 : this.#quietMs);
      }
      this.#waiting.push(resolve);
    });
  }

  /** Runs `#run` in `delayMs` (0: at the next turn), unless a check comes sooner already. */
  #checkSoon(delayMs: number): void {
    const check = this.#check;
    if (check !== undefined) {
      if (delayMs > 0 || 'immediate' in check) return;
      this.#cancelCheck();
    }
    this.#check = delayMs === 0 ? { immediate: setImmediate(this.#run) } : { timeout: setTimeout(this.#run, delayMs) };
  }

  readonly #run = (): void => {
    this.#check = undefined;
    if (this.#waiting.length === 0) return;
    const nowMs = Date.now();
    const capInMs = this.#maxWaitMs - (nowMs - this.#firstWaitedAtMs);
    if (capInMs <= 0) return this.#release();
    const quietInMs = this.#quietMs - (nowMs - this.#lastAnsweredAtMs);
    if (this.#inFlight > 0 && quietInMs > 0) return this.#checkSoon(Math.max(1, Math.min(quietInMs, capInMs)));
    // This worker's burst is over.
    if (this.#gate === undefined) return this.#release();
    if (!this.#toldOver) {
      this.#toldOver = true;
      this.#gate.over();
    }
    this.#checkSoon(capInMs);
  };

  #cancelCheck(): void {
    const check = this.#check;
    if (check === undefined) return;
    if ('immediate' in check) clearImmediate(check.immediate);
    else clearTimeout(check.timeout);
    this.#check = undefined;
  }

  /** Tells the gate that the burst said over waits no more (it went on, or its requests go at the limit). */
  #withdraw(): void {
    this.#toldOver = false;
    this.#gate?.withdrawn();
  }

  #release(): void {
    this.#cancelCheck();
    // At the limit, before the fleet's burst was over: the others do not wait for this one.
    if (this.#toldOver) this.#withdraw();
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}

/** A worker as the parent sees it: what the barrier sends it. */
export interface BurstWorker {
  send(message: 'burst-go'): unknown;
}

/**
 * The parent's side of `FleetBurstGate`: once every worker has said its burst is over (and not
 * withdrawn since), tells them all to let their requests go (`'burst-go'`), and starts afresh.
 */
export class FleetBurstBarrier<W extends BurstWorker> {
  readonly #workers: readonly W[];
  readonly #over = new Set<W>();

  constructor(workers: readonly W[]) {
    this.#workers = workers;
  }

  over(worker: W): void {
    this.#over.add(worker);
    if (this.#over.size < this.#workers.length) return;
    this.#over.clear();
    for (const each of this.#workers) each.send('burst-go');
  }

  withdrawn(worker: W): void {
    this.#over.delete(worker);
  }
}
