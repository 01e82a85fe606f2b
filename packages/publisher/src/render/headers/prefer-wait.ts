/**
 * The `wait` preference of a `Prefer` header (RFC 7240 §4.3) in whole seconds, or undefined
 * when absent or malformed (unknown or broken preferences are ignored, as the RFC requires).
 */
export function preferredWaitSeconds(prefer: string | string[] | undefined): number | undefined {
  if (prefer === undefined) return undefined;
  for (const header of Array.isArray(prefer) ? prefer : [prefer]) {
    for (const preference of header.split(',')) {
      const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*(?:;.*)?$/i.exec(preference);
      if (match?.[1] !== undefined) return Number(match[1]);
    }
  }
  return undefined;
}
