import fc from 'fast-check';

/**
 * Generated values per property of the pure fuzz tests (fast-check's `numRuns`): the one knob of
 * every fuzz test. The default keeps the suite short; `FUZZ_RUNS=1000000 npx vitest run …` runs
 * longer outside CI (docs/reliability.md#fuzz).
 */
export const FUZZ_RUNS = runsFrom(process.env.FUZZ_RUNS, 10_000);

/** The HTTP properties go through `app.inject()`, about a hundred times slower per value. */
export const HTTP_FUZZ_RUNS = Math.max(1, Math.ceil(FUZZ_RUNS / 20));

/** Time allowed to one property (vitest's timeout): the suite's default, or more for a longer run. */
export const FUZZ_TIMEOUT_MS = Math.max(30_000, FUZZ_RUNS * 2);

function runsFrom(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const runs = Number(value);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${JSON.stringify(value)}`);
  return runs;
}

/** What the message of a JavaScript error of our own, or of a library's, looks like: never for a client's eyes. */
export const INTERNAL_ERROR_MESSAGE = /Maximum call stack|Cannot read propert|Cannot set propert|is not a function|is not iterable|is not defined|Invalid array length|RangeError|TypeError|ReferenceError/;

/** Pieces that break line-based protocols and naive Unicode handling. */
export const trickyPieces = [
  '\r', '\n', '\r\n', '\n\n', '\r\r', '\n\r', '\0', ':', ' ', '\t',
  '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d\ude00', '\ufeff', '\u2028', '\u0085', 'ï»¿',
  'data: forged', 'id: 999', 'event: gap', 'retry: 1', ': comment', '%', '"', '\\', '\\u',
];

/** Strings made of ordinary characters and `trickyPieces`. */
export const trickyString = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof({ arbitrary: fc.constantFrom(...trickyPieces), weight: 1 }, { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 2 }),
    maxLength,
  });

/** What an HTTP field value may hold (RFC 9110 §5.5: visible ASCII, SP, HTAB, obs-text); Node refuses the rest earlier. */
export const headerValue = (pieces: readonly string[] = [], maxLength = 60) =>
  fc.string({
    unit: fc.oneof(
      { arbitrary: fc.string({ unit: fc.constantFrom(...headerChars), minLength: 1, maxLength: 1 }), weight: 3 },
      ...(pieces.length === 0 ? [] : [{ arbitrary: fc.constantFrom(...pieces), weight: 2 }]),
    ),
    maxLength,
  });

const headerChars = ['\t', ...Array.from({ length: 0x7f - 0x20 }, (_, index) => String.fromCharCode(0x20 + index)), '\x80', '\xa0', '\xe9', '\xff'];
