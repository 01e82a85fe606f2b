import cors from '@fastify/cors';
import underPressure from '@fastify/under-pressure';
import websocket from '@fastify/websocket';
import { createServer } from 'node:http';
import { streamPath } from '@rdf-stream/protocol';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { PublisherConfig } from '../config/config-schema.js';
import { PublisherError } from '../errors.js';
import type { AppContext } from './app-context.js';
import { corsPolicy } from './cors-policy.js';
import { DirectLatestRequests } from './direct-latest-requests.js';
import { fastLatestHandler } from './fast-latest.js';
import { HeldLongPolls } from './held-long-polls.js';
import { SocketAnswers } from './socket-answers.js';
import { LoadShedder } from './load-shedder.js';
import { LatestResponder } from './latest-responder.js';
import { clientErrorHandler, frameworkErrorHandler, registerProblemHandlers } from './problem.js';
import { documentsRoute } from './routes/documents-route.js';
import { eventsRoute } from './routes/events-route.js';
import { historyRoute } from './routes/history-route.js';
import { ingestRoute } from './routes/ingest-route.js';
import { latestRoute } from './routes/latest-route.js';
import { notificationsRoute } from './routes/notifications-route.js';
import { ontologiesRoute } from './routes/ontologies-route.js';
import { operationsRoute } from './routes/operations-route.js';
import { clientFileRoute, loadClientFile } from './routes/client-file-route.js';
import { registerPage } from './routes/page-route.js';
import { resourcesRoute } from './routes/resources-route.js';
import { sparqlRoute } from './routes/sparql-route.js';
import { WEBSOCKET_ROUTE, webSocketRoute } from './routes/websocket-route.js';
import { UnusedConnections } from './unused-connections.js';

/**
 * Push subscribers are told to come back later in their own terms at shutdown (the route
 * answers: SSE `retry:` in a `shed` stream, WebSocket close 1012), never a 503.
 */
const PUSH_ROUTES = new Set([streamPath(':id', 'events'), streamPath(':id', 'patches'), WEBSOCKET_ROUTE]);
/** Milliseconds between Node's checks for requests past `headersTimeoutMs` / `requestTimeoutMs`. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
const knownMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Builds the HTTP application without starting it: `server.ts` listens, tests `inject()`. */
export async function buildApp(context: AppContext): Promise<FastifyInstance> {
  const { config } = context;
  const responder = new LatestResponder(config, context.negotiation);
  // `/latest`'s answers written whole on their sockets, at once or when a held long-poll is released.
  const socketAnswers = new SocketAnswers(config.keepAliveTimeoutMs);
  const heldLongPolls = new HeldLongPolls(context, responder, socketAnswers);
  let answerFast: ReturnType<typeof fastLatestHandler> = () => false;
  let unusedConnections: UnusedConnections | undefined;
  let directLatest: DirectLatestRequests | undefined;
  let isUnderPressure = (): boolean => false;
  const shedder = new LoadShedder({
    maxEventLoopTurnMs: config.maxEventLoopTurnMs,
    shedHoldMs: config.shedHoldMs,
    retryAfterSeconds: config.pressureRetryAfterSeconds,
    sseRetryMs: config.sseRetryMs,
    onShed: (method, status) => context.metrics.requestAnswered('(shed)', knownMethods.has(method) ? method : 'OTHER', status),
  });
  const app = Fastify({
    serverFactory: (fastify) => {
      const server = createServer(
        {
          headersTimeout: config.headersTimeoutMs,
          requestTimeout: config.requestTimeoutMs,
          // How often Node looks for requests past those timeouts (its default is 30 s).
          connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, config.headersTimeoutMs),
        },
        (request, response) => {
          // First: a request pipelined behind a held long-poll comes after that one's answer.
          const heldConnection = heldLongPolls.beforeRequest(request.socket);
          if (!shedder.answer(request, response) && !answerFast(request, response)) fastify(request, response);
          // On a connection that had long-polls held: its monitor is told of this request's answer.
          if (heldConnection !== undefined) heldLongPolls.answered(heldConnection, response);
        },
      );
      if (config.latestRequestParser === 'direct') {
        directLatest = new DirectLatestRequests({
          context,
          responder,
          heldLongPolls,
          socketAnswers,
          busy: () => shedder.shedding || isUnderPressure(),
          onRequest: (socket) => unusedConnections?.begun(socket),
        });
        // Before any other `connection` listener: it takes Node's own.
        if (!directLatest.install(server)) {
          directLatest = undefined;
          context.logger?.warn("latestRequestParser: direct is not in use: this Node's HTTP server does not take connections as expected; Node's parser reads every request");
        }
      }
      heldLongPolls.attach(server);
      server.once('listening', () => shedder.forgetStartUp());
      // Fastify applies its keepAliveTimeout option only to a server it creates itself.
      server.keepAliveTimeout = config.keepAliveTimeoutMs;
      unusedConnections = new UnusedConnections(server);
      return server;
    },
    ...(context.logger === undefined ? { logger: { level: config.logLevel } } : { loggerInstance: context.logger }),
    // One log line per request would dominate CPU under polling load; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    keepAliveTimeout: config.keepAliveTimeoutMs,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  registerProblemHandlers(app, config.pressureRetryAfterSeconds);
  // Before the server closes: Fastify's forceCloseConnections: 'idle' ends idle keep-alive
  // connections, and these are the ones it cannot see.
  app.addHook('preClose', (done) => {
    unusedConnections?.closeAll();
    directLatest?.closeIdle();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    shedder.close();
    done();
  });

  await app.register(cors, { delegator: corsPolicy(config.corsIngestOrigins) });
  await app.register(underPressure, {
    maxEventLoopDelay: config.maxEventLoopDelayMs,
    maxHeapUsedBytes: config.maxHeapUsedBytes,
    maxRssBytes: config.maxRssBytes,
    retryAfter: config.pressureRetryAfterSeconds,
    ...(context.healthCheck === undefined
      ? {}
      : { healthCheck: context.healthCheck, healthCheckInterval: 1_000 }),
  });

  await registerWebSocket(app, config);
  addRequestHooks(app, context);

  await app.register(async (scope) => documentsRoute(scope, context));
  await app.register(async (scope) => latestRoute(scope, context, responder));
  await app.register(async (scope) => eventsRoute(scope, context));
  await app.register(async (scope) => webSocketRoute(scope, context, () => shedder.shedding));
  await app.register(async (scope) => historyRoute(scope, context));
  await app.register(async (scope) => operationsRoute(scope, context));
  await app.register(async (scope) => ingestRoute(scope, context));
  await app.register(async (scope) => notificationsRoute(scope, context));
  await app.register(async (scope) => resourcesRoute(scope, context));
  await app.register(async (scope) => ontologiesRoute(scope, context));
  await app.register(async (scope) => sparqlRoute(scope, context));
  await registerPage(app, context);
  const clientFile = await loadClientFile(context.pageAssetsDirectory);
  await app.register(async (scope) => clientFileRoute(scope, clientFile));
  await app.ready();
  isUnderPressure = () => app.isUnderPressure();
  answerFast = fastLatestHandler(context, responder, isUnderPressure, heldLongPolls, socketAnswers);
  return app;
}

/** The data WebSocket's server (`@fastify/websocket`), with the limits and compression every socket shares. */
async function registerWebSocket(app: FastifyInstance, config: PublisherConfig): Promise<void> {
  await app.register(websocket, {
    options: {
      // Clients send nothing but pongs and their close frame (docs/protocol.md).
      maxPayload: config.wsMaxPayloadBytes,
      // Offered when the client asks, always without server context takeover: every message is
      // then compressed on its own, once for all sockets (render/websocket-frame.ts).
      perMessageDeflate: { serverNoContextTakeover: true, clientNoContextTakeover: true },
      // The stream's broadcaster holds the connections (and counts them against maxSubscribers).
      clientTracking: false,
      // Supported by ws 8.23 (not declared by @types/ws 8.18): how long a closing handshake may take.
      ...({ closeTimeout: config.wsCloseTimeoutMs } as object),
    },
    errorHandler: (error, socket, request) => {
      // ws' own protocol errors (a frame over maxPayload: 1009, a malformed frame: 1002): ws
      // has begun the closing handshake with the right code, and ends the connection.
      if ((error as { code?: unknown }).code?.toString().startsWith('WS_ERR_') === true) {
        request.log.debug({ err: error }, 'data WebSocket closed for a protocol error');
        return;
      }
      request.log.error({ err: error }, 'data WebSocket failed');
      socket.terminate();
    },
    // At shutdown the broadcaster has sent every subscriber its close 1012 already: stop taking handshakes.
    preClose(done) {
      this.websocketServer.close();
      done();
    },
  });
}

/**
 * Refuses new requests once the publisher is closing (push routes answer in their own terms),
 * and counts every answer by route, method and status.
 */
function addRequestHooks(app: FastifyInstance, context: AppContext): void {
  // Callback-style hooks: they run on every poll, and an async hook costs a promise each time.
  app.addHook('onRequest', (request, _reply, done) => {
    if (context.lifecycle.closing && !PUSH_ROUTES.has(request.routeOptions.url ?? '')) {
      done(new PublisherError('PUB_ERR_SHUTTING_DOWN', undefined, {}, { connection: 'close', 'retry-after': '5' }));
      return;
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const method = knownMethods.has(request.method) ? request.method : 'OTHER';
    context.metrics.requestAnswered(request.routeOptions.url ?? 'unmatched', method, reply.statusCode);
    done();
  });
}
