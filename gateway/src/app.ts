import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { levels } from 'pino';
import { authGuards, signedIn } from './api/auth.ts';
import { failure, setStoreRetryAfter } from './api/envelope.ts';
import { apiPlugin } from './api/index.ts';
import type { Config } from './config.ts';
import type { PodHealth } from './health.ts';
import { accessLineWriter } from './http/access-line.ts';
import { consolePlugin } from './http/console.ts';
import { decodeBody } from './http/decompress.ts';
import { HTTP_ERRORS, notFoundError, toAppError } from './http/errors.ts';
import { guardInput } from './http/input-guard.ts';
import { measureRequests, registerProbes } from './http/observability.ts';
import { requestId } from './http/request-id.ts';
import { requestLogger } from './http/request-logger.ts';
import { isOpenAIPath, sendUnavailable } from './http/unavailable.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Metrics } from './metrics.ts';
import { parseJsonWithinDepth } from './relay/bounds/json-depth.ts';
import { type RelayPluginDeps, relayPlugin } from './relay/index.ts';
import { openAIError } from './relay/openai-error.ts';
import { keepRelayOutcomes } from './relay/outcome.ts';
import { playgroundPlugin } from './relay/playground.ts';
import { trackTaskRequests } from './relay/tasks/metrics.ts';
import { midjourneyPlugin } from './relay/tasks/midjourney/routes.ts';
import { sunoPlugin } from './relay/tasks/suno/routes.ts';
import { videoPlugin } from './relay/tasks/video/routes.ts';
import { restPlugin } from './rest/index.ts';
import type { Services } from './services.ts';

export interface AppDeps {
  config: Pick<Config, 'apiBodyLimitBytes' | 'trustProxy' | 'rateLimits' | 'version'>;
  logger: FastifyBaseLogger;
  metrics: Metrics;
  health: PodHealth;
  services: Services;
  relay: RelayPluginDeps;
}

/** Assembles the HTTP server from its plugins. No business logic lives here. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: requestId,
    // One access line per request (below) instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    childLoggerFactory: requestLogger,
    bodyLimit: deps.config.apiBodyLimitBytes,
    // While draining, requests on kept-alive connections get 503 and idle connections are closed.
    // Our own hook answers 503 while draining, in the caller's error shape (see below).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    trustProxy: deps.config.trustProxy,
  });
  app.setValidatorCompiler(validatorCompiler);
  // Before any route: relay, task and playground requests note their outcome on the request.
  keepRelayOutcomes(app);
  // The hooks that run on every request and never wait are callback hooks: an async one costs a
  // promise and a trip through the microtask queue per request. (A throw reaches the error handler too.)
  // Compressed request bodies (Content-Encoding) are decoded for every route, within its body limit.
  app.addHook('preParsing', (request, _reply, payload, done) => done(null, decodeBody(request, payload)));
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // Through the server's logger with the id as a field: the line request.log would write, without
  // making the request's child logger (see request-logger.ts). A route's quieter level (probes) still holds.
  const accessLine = accessLineWriter(deps.logger);
  const INFO = levels.values.info ?? 30;
  app.addHook('onResponse', (request, reply, done) => {
    if ((levels.values[request.log.level] ?? 0) > INFO) return done();
    accessLine({
      requestId: request.id,
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    });
    done();
  });

  // Handlers first: child plugins inherit them when they are registered.
  // Unknown relay paths answer like OpenAI does, so SDKs show a useful error; anything else in the envelope.
  // Requests that arrive after shutdown began (on kept-alive connections) get a clean 503 to retry
  // elsewhere; the probes still answer.
  app.addHook('onRequest', (request, reply, done) => {
    if (!deps.health.isDraining) return done();
    const path = request.url.split('?')[0] ?? '';
    if (path === '/healthz' || path === '/readyz') return done();
    // Answered here: a callback hook that sends does not call done, and the request goes no further.
    sendUnavailable(request, reply, HTTP_ERRORS.SERVER_DRAINING);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (isOpenAIPath(path)) {
      return reply.code(404).send(openAIError(`Invalid URL (${request.method} ${path})`, 'invalid_request_error'));
    }
    return reply.code(404).send(failure(request, notFoundError(request)));
  });
  app.setErrorHandler(async (error, request, reply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    setStoreRetryAfter(reply, appError);
    return reply.code(appError.status).send(failure(request, appError));
  });
  // Status-only probes here; /metrics and dependency details are on the private listener (METRICS_PORT).
  measureRequests(app, deps.metrics);
  registerProbes(app, deps.health);
  // The route schemas that validate input are also the API's documentation.
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Tollgate API',
        version: deps.config.version,
        description:
          'The /api routes (new-api compatible, {success, message, data}) and the /rest dialect for the console.',
      },
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'session' },
          accessToken: { type: 'apiKey', in: 'header', name: 'Authorization' },
          userHeader: { type: 'apiKey', in: 'header', name: 'New-Api-User' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(apiPlugin, {
    prefix: '/api',
    services: deps.services,
    rateLimits: deps.config.rateLimits,
    channelTester: deps.relay.tester,
    affinity: deps.relay.affinity,
  });
  await app.register(relayPlugin, deps.relay);
  const guards = authGuards({
    db: deps.services.store.db,
    sessions: deps.services.sessions,
    keyring: deps.services.keyring,
    twoFactor: deps.services.twoFactor,
  });
  const consoleUserId = async (request: FastifyRequest) => {
    await guards.user(request);
    return signedIn(request).user.id;
  };
  for (const [platform, format] of [
    [midjourneyPlugin, 'midjourney'],
    [sunoPlugin, 'suno'],
    [videoPlugin, 'video'],
  ] as const) {
    await app.register(async (scope) => {
      parseJsonWithinDepth(scope);
      trackTaskRequests(scope, deps.relay.metrics, format);
      scope.addHook('preValidation', guardInput);
      await scope.register(platform, { ...deps.relay, consoleUserId });
    });
  }
  await app.register(playgroundPlugin, { relay: deps.relay, guards, keyring: deps.services.keyring });
  await app.register(restPlugin, {
    prefix: '/rest',
    services: deps.services,
    rateLimit: deps.config.rateLimits.globalApi,
  });
  // The web console (console/dist) at `/`: its catch-all GET never shadows a gateway route (the more specific wins).
  await app.register(consolePlugin, {});

  return app;
}
