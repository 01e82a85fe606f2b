/**
 * Checks, on a sample client, that the cheap reading of a gzip event stream (`GzipEventReader`)
 * gives exactly what a real gzip decoder gives: the texts of the one and the decoded stream of
 * the other must be the same characters, in the same order.
 */
export class GzipStreamCheck {
  /** Events whose text the decoder confirmed. */
  verified = 0;
  /** Events whose text differed from the decoder's (the cheap reading is then wrong). */
  mismatches = 0;
  readonly #expected: string[] = [];
  #decoded = '';

  /** The cheap reading produced `text` (one or more whole events). */
  read(text: string): void {
    this.#expected.push(text);
    this.#compare();
  }

  /** The gzip decoder produced `text` (any piece of the stream). */
  decoded(text: string): void {
    this.#decoded += text;
    this.#compare();
  }

  #compare(): void {
    while (this.#expected.length > 0 && this.#decoded.length >= this.#expected[0]!.length) {
      const next = this.#expected.shift()!;
      if (this.#decoded.startsWith(next)) this.verified++;
      else this.mismatches++;
      this.#decoded = this.#decoded.slice(next.length);
    }
  }
}
