const dayTimeDuration = /^P(?!$)(?:(\d{1,9})D)?(?:T(?!$)(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9}(?:\.\d{1,3})?)S)?)?$/;

/**
 * Parses an `xsd:duration` made of days, hours, minutes and seconds (`PT10S`, `P1DT2H`,
 * `PT0.5S`) into milliseconds; undefined for anything else. Years and months are refused: their
 * length depends on the calendar. The designators are read case-insensitively, since the Solid
 * notification examples write `PT10s`.
 */
export function parseDayTimeDuration(text: string): number | undefined {
  const match = dayTimeDuration.exec(text.toUpperCase());
  if (match === null) return undefined;
  const [, days, hours, minutes, seconds] = match;
  const ms =
    Number(days ?? 0) * 86_400_000 + Number(hours ?? 0) * 3_600_000 + Number(minutes ?? 0) * 60_000 + Math.round(Number(seconds ?? 0) * 1000);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** The `xsd:duration` of `ms` milliseconds, in seconds (`PT1.5S`). */
export const formatDuration = (ms: number) => `PT${ms / 1000}S`;
