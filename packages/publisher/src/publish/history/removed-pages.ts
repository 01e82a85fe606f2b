/**
 * When retention removed a stream's pages, for as long as `graceMs` after it: what lets a page
 * that a cached root still names answer for a while instead of 410 (see `removedPageQuads`).
 *
 * The log does not say when it removes pages; this learns it by being shown the oldest page
 * (`observe`, at each append and each history request), so a removal is dated when it is first
 * seen, at most one element or one request after it happened: the grace period is never shorter
 * than `graceMs`. Memory: one entry per observed advance of the oldest page within the last
 * `graceMs`, at most one per retention pass or append in that time.
 */
export class RemovedPages {
  readonly #graceMs: number;
  #epoch: string | undefined;
  /** The oldest page at the last observation. */
  #oldestPage: number | undefined;
  /** Pages `fromPage`…`toPage` were first seen removed at `atMs`; oldest first. */
  #removals: Array<{ readonly fromPage: number; readonly toPage: number; readonly atMs: number }> = [];

  constructor(graceMs: number) {
    this.#graceMs = graceMs;
  }

  /** Takes note that the oldest retained page of `epoch` is `oldestPage` at `nowMs`. */
  observe(epoch: string, oldestPage: number, nowMs: number): void {
    if (epoch !== this.#epoch) {
      // A new life of the log: none of the old one's pages answers any more.
      this.#epoch = epoch;
      this.#oldestPage = oldestPage;
      this.#removals = [];
      return;
    }
    if (this.#oldestPage !== undefined && oldestPage > this.#oldestPage && this.#graceMs > 0) {
      this.#removals.push({ fromPage: this.#oldestPage, toPage: oldestPage - 1, atMs: nowMs });
    }
    this.#oldestPage = Math.max(oldestPage, this.#oldestPage ?? oldestPage);
    this.#forgetBefore(nowMs);
  }

  /**
   * When page `page` of `epoch` was first seen removed, if that was less than `graceMs` before
   * `nowMs`; undefined for a page removed longer ago, before the first observation, or never.
   */
  removedAtMs(epoch: string, page: number, nowMs: number): number | undefined {
    this.#forgetBefore(nowMs);
    if (epoch !== this.#epoch) return undefined;
    return this.#removals.find((removal) => page >= removal.fromPage && page <= removal.toPage)?.atMs;
  }

  #forgetBefore(nowMs: number): void {
    const first = this.#removals.findIndex((removal) => nowMs - removal.atMs < this.#graceMs);
    if (first !== 0) this.#removals = first === -1 ? [] : this.#removals.slice(first);
  }
}
