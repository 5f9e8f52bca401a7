import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { BILLING_OPENAI_CODES } from '../domain/billing/index.ts';
import type { OptionsService } from '../domain/options/index.ts';
import { AppError } from '../errors.ts';
import { requestLanguage, toAppError } from '../http/errors.ts';
import type { OutboundGuard } from '../http/outbound/guard.ts';
import type { Database } from '../store/database.ts';
import { withLeasedQuota } from '../store/repositories/quota-leases.ts';
import { authenticateKey, type RelayCaller } from './auth/key-auth.ts';
import type { KeyCache } from './auth/key-cache.ts';
import { assertJsonDepth } from './bounds/json-depth.ts';
import { assertFormFields, assertFormPartCount } from './bounds/multipart.ts';
import { assertRequestBounds } from './bounds/request-bounds.ts';
import { relayContext, replySink } from './client-sink.ts';
import { errorBodyFor } from './convert/index.ts';
import { countTokens } from './count-tokens.ts';
import { RELAY_ERRORS } from './errors.ts';
import { ClientGone } from './exchange/failure.ts';
import { mayPassThrough } from './exchange/pass-through.ts';
import type { ChannelTester } from './health/channel-test.ts';
import { listShapeOf, modelList, oneModel } from './models.ts';
import { errorTypeOf, noteRelayFailure, trackRelayOutcome } from './outcome.ts';
import { type PipelineDeps, type RelayRequest, relay } from './pipeline.ts';
import { realtimeRoute, routeUpgrades } from './realtime/index.ts';
import { setRetryAfter } from './retry-after.ts';
import type { WireFormat } from './types.ts';

export interface RelayPluginDeps extends PipelineDeps {
  db: Kysely<Database>;
  keys: KeyCache;
  options: OptionsService;
  bodyLimitBytes: number;
  tester: ChannelTester;
  /** Fetches of URLs that clients or upstream answers supplied (result images and videos), under fetch_setting.*. */
  outbound: OutboundGuard;
}

interface Route {
  path: string;
  format: WireFormat;
  /** The model when the client names none (reference §2.6). */
  defaultModel?: string;
  multipart?: boolean;
}

const ROUTES: Route[] = [
  { path: '/v1/chat/completions', format: 'openai-chat' },
  { path: '/v1/completions', format: 'openai-completions' },
  { path: '/v1/responses', format: 'openai-responses' },
  { path: '/v1/responses/compact', format: 'openai-responses-compact' },
  { path: '/v1/embeddings', format: 'openai-embeddings' },
  { path: '/v1/images/generations', format: 'openai-images', defaultModel: 'dall-e-2' },
  { path: '/v1/images/edits', format: 'openai-image-edits', defaultModel: 'dall-e-2', multipart: true },
  { path: '/v1/audio/speech', format: 'openai-audio-speech', defaultModel: 'tts-1' },
  {
    path: '/v1/audio/transcriptions',
    format: 'openai-audio-transcriptions',
    defaultModel: 'whisper-1',
    multipart: true,
  },
  { path: '/v1/audio/translations', format: 'openai-audio-translations', defaultModel: 'whisper-1', multipart: true },
  { path: '/v1/moderations', format: 'openai-moderations', defaultModel: 'text-moderation-stable' },
  { path: '/v1/rerank', format: 'rerank' },
  { path: '/v1/messages', format: 'claude-messages' },
];

/** Gemini's native actions, `POST /v1beta/models/{model}:{action}` (also under /v1). */
const GEMINI_ACTIONS: Record<string, { format: WireFormat; stream: boolean }> = {
  generateContent: { format: 'gemini-generate', stream: false },
  streamGenerateContent: { format: 'gemini-generate', stream: true },
  embedContent: { format: 'gemini-embed', stream: false },
  batchEmbedContents: { format: 'gemini-embed', stream: false },
};

/** OpenAI routes Tollgate does not relay: answered 501 in OpenAI's shape, as new-api does. */
const NOT_IMPLEMENTED: Array<[method: 'GET' | 'POST' | 'DELETE', path: string]> = [
  ['POST', '/v1/images/variations'],
  ['GET', '/v1/files'],
  ['POST', '/v1/files'],
  ['GET', '/v1/files/:id'],
  ['DELETE', '/v1/files/:id'],
  ['GET', '/v1/files/:id/content'],
  ['POST', '/v1/fine-tunes'],
  ['GET', '/v1/fine-tunes'],
  ['GET', '/v1/fine-tunes/:id'],
  ['POST', '/v1/fine-tunes/:id/cancel'],
  ['GET', '/v1/fine-tunes/:id/events'],
  ['DELETE', '/v1/models/:model'],
];

declare module 'fastify' {
  interface FastifyRequest {
    relayCaller: RelayCaller | null;
    /** The JSON body's bytes as they came (decoded), kept for pass-through mode. */
    relayRawBody: Buffer | null;
  }
  interface FastifyContextConfig {
    /** Set on the routes that relay: their requests are counted in the relay metrics, whatever happens. */
    relayFormat?: WireFormat;
  }
}

/** The OpenAI-compatible relay (DESIGN.md §3): every route runs the same pipeline with its wire format. */
export async function relayPlugin(app: FastifyInstance, deps: RelayPluginDeps): Promise<void> {
  app.decorateRequest('relayCaller', null);
  app.decorateRequest('relayRawBody', null);
  // Fastify's own JSON parsing, with the bytes it parsed kept (a reference, not a copy) for pass-through.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    try {
      assertJsonDepth(bytes);
    } catch (error) {
      return done(error as Error);
    }
    request.relayRawBody = bytes;
    parseJson(request, bytes.toString('utf8'), done);
  });
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
    (_request, body, done) => done(null, body),
  );
  app.setErrorHandler(async (error, request, reply) => renderError(error, request, reply));
  // A callback hook: with the key in memory the check is synchronous, and no promise is made per request.
  app.addHook('onRequest', (request, reply, done) => {
    const format = request.routeOptions.config.relayFormat;
    // Tracked before the key is checked, so that refusals are counted too.
    if (format) trackRelayOutcome(request, reply, deps.metrics, format);
    const caller = authenticateKey(request, deps.keys, deps.options);
    if (!(caller instanceof Promise)) {
      request.relayCaller = caller;
      return done();
    }
    caller.then((checked) => {
      request.relayCaller = checked;
      done();
    }, done);
  });

  for (const route of ROUTES) {
    const config = { relayFormat: route.format };
    app.post(route.path, { bodyLimit: deps.bodyLimitBytes, config }, async (request, reply) => {
      const input = await parseRequest(route, request);
      assertRequestBounds(input);
      input.rawBody = rawBodyFor(deps, request, input.model);
      await relay(deps, caller(request), input, relayContext(request, reply));
      return reply;
    });
  }

  // Codex first asks for the Responses API over a WebSocket (a GET with Upgrade). 426 makes it fall back
  // to HTTP at once; a 404 would cost it five retries with back-off before it does.
  app.get('/v1/responses', async (request, reply) => {
    if (String(request.headers.upgrade ?? '').toLowerCase() !== 'websocket') return reply.callNotFound();
    throw new AppError(RELAY_ERRORS.websocket_unsupported);
  });

  // WebSocket handshakes go through the routes too: the Realtime API accepts them, others refuse in HTTP.
  routeUpgrades(app);
  realtimeRoute(app, deps, deps.bodyLimitBytes);

  // Token counting answers, but is not a billed relay request: no relay format, no consume log.
  app.post('/v1/messages/count_tokens', { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
    await countTokens(deps, caller(request), request, replySink(request, reply));
    return reply;
  });

  for (const prefix of ['/v1beta/models/*', '/v1/models/*']) {
    // The action in the path decides the format; until it is parsed, the request counts as a generation.
    const config = { relayFormat: 'gemini-generate' as const };
    app.post(prefix, { bodyLimit: deps.bodyLimitBytes, config }, async (request, reply) => {
      const input = parseGeminiRequest(request);
      assertRequestBounds(input);
      input.rawBody = rawBodyFor(deps, request, input.model);
      await relay(deps, caller(request), input, relayContext(request, reply));
      return reply;
    });
  }

  /** Models the key may use: its group's (an auto token: those of all its auto groups), narrowed by its model limits. */
  const usableModels = (request: FastifyRequest) => {
    const { identity, group, autoGroups } = caller(request);
    const limits = identity.token.modelLimits;
    const models = autoGroups
      ? [...new Set(autoGroups.flatMap((g) => deps.routing.models(g)))].sort()
      : deps.routing.models(group);
    return models.filter((model) => !limits || limits.has(model));
  };
  app.get('/v1/models', async (request) => modelList(usableModels(request), listShapeOf(request)));
  app.get('/v1beta/models', async (request) => modelList(usableModels(request), 'gemini'));
  app.get('/v1beta/openai/models', async (request) => modelList(usableModels(request), 'openai'));
  app.get<{ Params: { model: string } }>('/v1/models/:model', async (request) => {
    const model = request.params.model;
    if (!usableModels(request).includes(model)) {
      throw new AppError(RELAY_ERRORS.model_not_found, { group: caller(request).group, model });
    }
    return oneModel(model, listShapeOf(request));
  });

  // OpenAI's legacy billing endpoints, which many dashboards and CLI tools still read (reference §2.6).
  for (const prefix of ['', '/v1']) {
    app.get(`${prefix}/dashboard/billing/subscription`, async (request) => {
      const limitUsd = await billingLimitUsd(deps, caller(request));
      const { token } = caller(request).identity;
      return {
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: limitUsd,
        hard_limit_usd: limitUsd,
        system_hard_limit_usd: limitUsd,
        access_until: token.expiredTime > 0 ? token.expiredTime : 0,
      };
    });
    app.get(`${prefix}/dashboard/billing/usage`, async (request) => {
      const used = await billingUsedQuota(deps, caller(request));
      // total_usage is in hundredths of a US dollar.
      return { object: 'list', total_usage: (used / deps.options.getNumber('QuotaPerUnit')) * 100 };
    });
  }

  for (const [method, path] of NOT_IMPLEMENTED) {
    app.route({
      method,
      url: path,
      handler: async () => Promise.reject(new AppError(RELAY_ERRORS.api_not_implemented)),
    });
  }
}

/** Token stats when DisplayTokenStatEnabled (the default), else the owner's wallet; unlimited tokens report 100,000,000. */
async function billingLimitUsd(deps: RelayPluginDeps, who: RelayCaller): Promise<number> {
  const perUnit = deps.options.getNumber('QuotaPerUnit');
  const { token, user } = who.identity;
  if (deps.options.getBoolean('DisplayTokenStatEnabled')) {
    if (token.unlimited) return 100_000_000;
    const stored = await deps.db
      .selectFrom('tokens')
      .select(['id', 'remain_quota', 'used_quota'])
      .where('id', '=', token.id)
      .executeTakeFirst();
    // What is left as shown: leased quota added back.
    const [row] = stored ? await withLeasedQuota(deps.db, 'token', [stored]) : [];
    return ((row?.remain_quota ?? 0) + (row?.used_quota ?? 0)) / perUnit;
  }
  const stored = await deps.db
    .selectFrom('users')
    .select(['id', 'quota', 'used_quota'])
    .where('id', '=', user.id)
    .executeTakeFirst();
  const [row] = stored ? await withLeasedQuota(deps.db, 'user', [stored]) : [];
  return ((row?.quota ?? 0) + (row?.used_quota ?? 0)) / perUnit;
}

async function billingUsedQuota(deps: RelayPluginDeps, who: RelayCaller): Promise<number> {
  const { token, user } = who.identity;
  if (deps.options.getBoolean('DisplayTokenStatEnabled')) {
    const row = await deps.db.selectFrom('tokens').select('used_quota').where('id', '=', token.id).executeTakeFirst();
    return row?.used_quota ?? 0;
  }
  const row = await deps.db.selectFrom('users').select('used_quota').where('id', '=', user.id).executeTakeFirst();
  return row?.used_quota ?? 0;
}

/**
 * The JSON body's bytes, when a channel the request may go to passes bodies through; otherwise
 * dropped at once, so that a request holds only its parsed body while it runs.
 */
function rawBodyFor(deps: RelayPluginDeps, request: FastifyRequest, model: string): Uint8Array | undefined {
  const raw = request.relayRawBody;
  request.relayRawBody = null;
  if (!raw) return undefined;
  const who = caller(request);
  const pinned = who.pinnedChannelId === undefined ? undefined : deps.routing.channel(who.pinnedChannelId);
  const candidates = pinned ? [] : deps.routing.candidates(who.group, model);
  return mayPassThrough(deps.options, candidates, pinned) ? raw : undefined;
}

function caller(request: FastifyRequest): RelayCaller {
  if (!request.relayCaller) throw new AppError(RELAY_ERRORS.invalid_token);
  return request.relayCaller;
}

async function parseRequest(route: Route, request: FastifyRequest): Promise<RelayRequest> {
  const invalid = (detail: string) => new AppError(RELAY_ERRORS.invalid_request, { detail });
  if (route.multipart) {
    const contentType = String(request.headers['content-type'] ?? '');
    if (!contentType.startsWith('multipart/form-data') || !Buffer.isBuffer(request.body)) {
      throw invalid('send multipart/form-data');
    }
    assertFormPartCount(request.body, contentType);
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': contentType } }).formData();
    } catch {
      throw invalid('the multipart body could not be read');
    }
    assertFormFields(form);
    const model = form.get('model');
    return {
      format: route.format,
      model: typeof model === 'string' && model ? model : (route.defaultModel ?? ''),
      body: form,
      stream: false,
      wantsStreamUsage: false,
    };
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object');
  const json = body as Record<string, unknown>;
  const model = typeof json.model === 'string' && json.model ? json.model : route.defaultModel;
  if (!model) throw new AppError(RELAY_ERRORS.model_required);
  const streamOptions = json.stream_options as { include_usage?: unknown } | undefined;
  return {
    format: route.format,
    model,
    body: json,
    stream: json.stream === true,
    wantsStreamUsage: streamOptions?.include_usage !== false,
  };
}

/** A Gemini native request: the model and the action are in the path, the key may be in ?key=. */
function parseGeminiRequest(request: FastifyRequest): RelayRequest {
  const target = decodedPath((request.params as { '*': string })['*'] ?? '');
  const colon = target.lastIndexOf(':');
  const model = target.slice(0, colon).replace(/^models\//, '');
  const action = GEMINI_ACTIONS[target.slice(colon + 1)];
  if (colon <= 0 || !action) {
    throw new AppError(RELAY_ERRORS.invalid_request, {
      detail: `expected models/{model}:{${Object.keys(GEMINI_ACTIONS).join('|')}}`,
    });
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError(RELAY_ERRORS.invalid_request, { detail: 'the body must be a JSON object' });
  }
  return {
    format: action.format,
    model,
    body: body as Record<string, unknown>,
    stream: action.stream,
    wantsStreamUsage: false,
  };
}

/** A path segment's percent-escapes decoded; a malformed escape is the client's error, not a 500. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw new AppError(RELAY_ERRORS.invalid_request, { detail: 'the path holds a malformed percent-escape' });
  }
}

/** The client format of a relay path, so that errors come back in the shape the client parses. */
function formatOfPath(request: FastifyRequest): WireFormat {
  const path = request.url.split('?')[0] ?? '';
  if (path === '/v1/messages' || path === '/v1/messages/count_tokens') return 'claude-messages';
  if (path.startsWith('/v1beta/') || (request.method === 'POST' && path.startsWith('/v1/models/'))) {
    return path.includes('embed') ? 'gemini-embed' : 'gemini-generate';
  }
  return 'openai-chat';
}

/** Every relay error in the client's error shape, with the request id appended as new-api does. */
async function renderError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  noteRelayFailure(request, reply, errorTypeOf(error));
  // Nobody is left to answer: counted (499), not logged as a fault.
  if (error instanceof ClientGone) return;
  const appError = toAppError(error);
  if (appError.status >= 500 && !(error instanceof AppError)) request.log.error({ err: error }, 'relay request failed');
  const code = BILLING_OPENAI_CODES[appError.code as keyof typeof BILLING_OPENAI_CODES] ?? appError.code;
  const message = `${appError.localized(requestLanguage(request))} (request id: ${request.id})`;
  if (reply.sent || reply.raw.headersSent) return;
  const body = errorBodyFor(formatOfPath(request), {
    status: appError.status,
    message,
    type: 'new_api_error',
    code,
  });
  setRetryAfter(reply, error);
  return reply.code(appError.status).send(body);
}
