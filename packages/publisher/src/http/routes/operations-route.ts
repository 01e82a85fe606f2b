import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogAppendError } from '../../log/event-log.js';
import type { AppContext } from '../app-context.js';

const logFailure = (failure: LogAppendError | undefined) =>
  failure === undefined ? {} : { state: 'degraded' as const, detail: `the log cannot be written: ${failure.code ?? failure.message}` };

/**
 * `ok`; `degraded` while a shared log's server is unreachable (what the instance holds is still
 * served, appends are refused); `failing` when the log cannot be written (a full disk).
 */
const logState = (failure: LogAppendError | undefined) =>
  failure === undefined
    ? { state: 'ok' as const }
    : { state: failure.code === 'REDIS_UNAVAILABLE' ? ('degraded' as const) : ('failing' as const), detail: failure.message };

/** Monitoring must keep answering while new work is shed. */
const exemptFromShedding = { config: { pressureHandler: (_request: FastifyRequest) => undefined } };

/** `GET /health` (liveness, and per stream its state and its source's), `GET /time` and `GET /metrics` (Prometheus text format). */
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
          // A degraded source leaves the stream serving its last element: reported, not a 503.
          // A log that cannot be written (a full disk) pauses the source: nothing it produces is kept.
          source: { kind: hub.source.kind, ...hub.source.health(), ...logFailure(hub.log.appendFailure) },
          log: { epoch: hub.log.epoch, oldestSeq: hub.log.oldestSeq ?? null, ...logState(hub.log.appendFailure) },
        },
      ]),
    );
    // `starting` until every source has started: the process serves what its logs hold, but a
    // stream's source has not made its first attempt yet (never reported as `stopped`).
    const starting = [...context.hubs.values()].some((hub) => hub.source.health().state === 'starting');
    const status = context.lifecycle.closing ? 'closing' : !healthy ? 'degraded' : starting ? 'starting' : 'ok';
    return reply
      .code(status === 'ok' || status === 'starting' ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status, streams });
  });

  // The server's clock in milliseconds, for clients that correct latency by a clock offset (NTP-style).
  app.get('/time', exemptFromShedding, (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ epochMs: Date.now() }),
  );

  app.get('/metrics', exemptFromShedding, async (_request, reply) =>
    reply
      .header('content-type', context.metrics.registry.contentType)
      .header('cache-control', 'no-store')
      .send(await context.metrics.registry.metrics()),
  );
}
