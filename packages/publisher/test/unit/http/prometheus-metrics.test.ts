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

  it('counts the requests answered by route, method and status class, each once however often it is scraped', async () => {
    const metrics = new PrometheusMetrics(false);
    const count = (text: string, labels: string) => Number(new RegExp(`^rdf_stream_http_requests_total\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1]);
    const latestGet = 'route="/streams/:id/latest",method="GET",status="2xx"';
    for (let answer = 0; answer < 3; answer++) metrics.requestAnswered('/streams/:id/latest', 'GET', 200);
    metrics.requestAnswered('/streams/:id/latest', 'GET', 304);
    metrics.requestAnswered('/streams/:id/latest', 'HEAD', 200);
    const first = await metrics.registry.metrics();
    expect(count(first, latestGet)).toBe(3);
    expect(count(first, 'route="/streams/:id/latest",method="GET",status="3xx"')).toBe(1);
    expect(count(first, 'route="/streams/:id/latest",method="HEAD",status="2xx"')).toBe(1);
    // Scraped again with nothing answered meanwhile: the same counts.
    expect(count(await metrics.registry.metrics(), latestGet)).toBe(3);
    metrics.requestAnswered('/streams/:id/latest', 'GET', 200);
    expect(count(await metrics.registry.metrics(), latestGet)).toBe(4);
  });

  it('reports the long-polls held by stream as last told, however often it was told between two scrapes', async () => {
    const metrics = new PrometheusMetrics(false);
    const waiting = (text: string, stream: string) => Number(new RegExp(`^rdf_stream_long_poll_waiting\\{stream="${stream}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    for (let count = 1; count <= 5; count++) metrics.longPollWaitersChanged('parking', count);
    metrics.longPollWaitersChanged('air', 2);
    const first = await metrics.registry.metrics();
    expect(waiting(first, 'parking')).toBe(5);
    expect(waiting(first, 'air')).toBe(2);
    metrics.longPollWaitersChanged('parking', 0);
    expect(waiting(await metrics.registry.metrics(), 'parking')).toBe(0);
  });

  it('reports no process figures when asked not to', async () => {
    const text = await new PrometheusMetrics(false).registry.metrics();
    expect(text).not.toMatch(/rdf_stream_heap_retained_bytes|nodejs_heap_size_used_bytes/);
  });
});
