/** One round trip to the server's clock. All times in milliseconds since the epoch. */
export interface ClockSample {
  readonly sentAt: number;
  readonly serverTime: number;
  readonly receivedAt: number;
}

/** `serverClock ≈ clientClock + offsetMs`, within ± `uncertaintyMs`. */
export interface ClockOffset {
  readonly offsetMs: number;
  readonly uncertaintyMs: number;
  readonly samples: number;
}

/**
 * NTP-style estimate: each sample says the server read its clock somewhere inside the round
 * trip, so its offset is `serverTime − midpoint` within ± half the round trip. The sample with
 * the shortest round trip is the tightest bound: it gives the estimate.
 */
export function estimateOffset(samples: readonly ClockSample[]): ClockOffset {
  if (samples.length === 0) throw new RangeError('at least one clock sample is needed');
  let best = samples[0] as ClockSample;
  for (const sample of samples) {
    if (sample.receivedAt - sample.sentAt < best.receivedAt - best.sentAt) best = sample;
  }
  const roundTrip = Math.max(0, best.receivedAt - best.sentAt);
  return {
    offsetMs: best.serverTime - (best.sentAt + best.receivedAt) / 2,
    uncertaintyMs: roundTrip / 2,
    samples: samples.length,
  };
}

/**
 * Measures the offset against a publisher's `GET /time` (`{"epochMs": …}`) with `rounds`
 * sequential round trips. Resolves to undefined when the server has no such endpoint.
 */
export async function measureClockOffset(
  timeUrl: string,
  options: { rounds?: number; fetch?: typeof fetch; signal?: AbortSignal } = {},
): Promise<ClockOffset | undefined> {
  const { rounds = 5, fetch: fetchImpl = fetch, signal } = options;
  const samples: ClockSample[] = [];
  for (let round = 0; round < rounds; round++) {
    const sentAt = Date.now();
    const response = await fetchImpl(timeUrl, { headers: { accept: 'application/json' }, signal: signal ?? null });
    const receivedAt = Date.now();
    if (!response.ok) return undefined;
    const body = (await response.json()) as { epochMs?: unknown };
    if (typeof body.epochMs !== 'number') return undefined;
    samples.push({ sentAt, serverTime: body.epochMs, receivedAt });
  }
  return estimateOffset(samples);
}
