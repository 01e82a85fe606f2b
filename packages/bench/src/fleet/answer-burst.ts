/** Longest a request made right after its answer waits for the worker's burst of answers to end (ms). */
export const MAX_BURST_WAIT_MS = 50;

/**
 * The answers a worker's pollers are reading, and when their burst ends. Thousands of clients
 * share a worker process, and the workers share the cores with the publisher, where on their own
 * machines they would not: a long-poller that sends its next request as soon as its answer is
 * read (a write to a loopback socket costs tens of µs, the publisher's end taking the bytes in
 * the same system call) makes every client of its worker whose answer came after it wait for
 * that write, and the publisher, still answering the others, wait for a core; all of them count
 * it as latency. A request that follows its answer at once therefore waits (`ended`) until a turn
 * of the event loop has read no answer (the burst of an element's answers is over), or
 * `maxWaitMs` after the first request waited; the requests then go out in the order they were
 * made. It misses nothing by it: an element published meanwhile is the answer to the request, at once.
 */
export class AnswerBurst {
  readonly #maxWaitMs: number;
  #waiting: Array<() => void> = [];
  #firstWaitedAtMs = 0;
  #answersSinceCheck = 0;

  constructor(maxWaitMs = MAX_BURST_WAIT_MS) {
    this.#maxWaitMs = maxWaitMs;
  }

  /** Counts an answer read: the burst goes on. */
  answered(): void {
    this.#answersSinceCheck++;
  }

  /** Resolves once the burst of answers is over, or `maxWaitMs` after the first waiter of this burst. */
  ended(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#waiting.length === 0) {
        this.#firstWaitedAtMs = Date.now();
        this.#answersSinceCheck = 0;
        setImmediate(this.#check);
      }
      this.#waiting.push(resolve);
    });
  }

  readonly #check = (): void => {
    const goesOn = this.#answersSinceCheck > 0;
    this.#answersSinceCheck = 0;
    if (goesOn && Date.now() - this.#firstWaitedAtMs < this.#maxWaitMs) {
      setImmediate(this.#check);
      return;
    }
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  };
}
