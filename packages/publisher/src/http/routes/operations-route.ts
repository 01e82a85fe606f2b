import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';

/** Monitoring must keep answering while new work is shed. */
const exemptFromShedding = { config: { pressureHandler: (_request: FastifyRequest) => undefined } };

/** `GET /health` (liveness and per-stream state) and `GET /metrics` (Prometheus text format). */
export function operationsRoute(app: FastifyInstance, context: AppContext): void {
  app.get('/health', exemptFromShedding, async (_request, reply) => {
    const healthy = context.healthCheck === undefined || (await context.healthCheck());
    const streams = Object.fromEntries(
      [...context.hubs].map(([id, hub]) => [
        id,
        {
          latestSeq: hub.log.latestSeq,
          lastElementAt: hub.latest?.generatedAt.toISOString() ?? null,
          subscribers: hub.broadcaster.size,
          longPollWaiting: hub.waiters.size,
        },
      ]),
    );
    const status = context.lifecycle.closing ? 'closing' : healthy ? 'ok' : 'degraded';
    return reply
      .code(status === 'ok' ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status, streams });
  });

  app.get('/metrics', exemptFromShedding, async (_request, reply) =>
    reply
      .header('content-type', context.metrics.registry.contentType)
      .header('cache-control', 'no-store')
      .send(await context.metrics.registry.metrics()),
  );
}
