import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../src/http/prometheus-metrics.js';

/** V8's own full collection, reachable without starting Node with --expose-gc. */
function fullGarbageCollection(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const retained = async (metrics: PrometheusMetrics) =>
  Number(/^rdf_stream_heap_retained_bytes (\S+)$/m.exec(await metrics.registry.metrics())?.[1]);

describe('PrometheusMetrics', () => {
  it('reports the old generation retained after a full collection, and follows what is retained', async () => {
    const metrics = new PrometheusMetrics(true);
    fullGarbageCollection();
    // The figure is noted when V8 reports the collection to observers, a moment after it.
    await expect.poll(() => retained(metrics), { timeout: 10_000 }).toBeGreaterThan(0);
    const before = await retained(metrics);
    // Hold 64 MiB in the heap (arrays of doubles: large objects; typed arrays would live outside
    // the heap), then collect again: the figure rises by as much.
    const held = Array.from({ length: 64 }, () => new Array<number>(131_072).fill(0.5));
    fullGarbageCollection();
    await expect.poll(() => retained(metrics), { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 60 * 1_048_576);
    expect(held.length).toBe(64);
  });

  it('reports no process figures when asked not to', async () => {
    const text = await new PrometheusMetrics(false).registry.metrics();
    expect(text).not.toMatch(/rdf_stream_heap_retained_bytes|nodejs_heap_size_used_bytes/);
  });
});
