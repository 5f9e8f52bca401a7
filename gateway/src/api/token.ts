import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TokenCreate, TokenService, TokenUpdate } from '../domain/tokens/index.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { periodLimitSchema } from './period-limits.ts';
import { idParams, isStatusOnly, rateLimitsSchema, statusOnlyQuery, text } from './schemas.ts';

export interface TokenRouteDeps {
  guards: ReturnType<typeof authGuards>;
  /** The per-IP limit for calls that hand out secrets (new-api puts key reveals behind it). */
  critical: (request: FastifyRequest) => Promise<void>;
  tokens: TokenService;
}

const tags = ['token'];

const idSchema = idParams('Token id');

/** The fields a user sets; the same on create and update (absent fields keep their value on update). */
export const tokenFields = {
  name: text('Name, required on create, at most 50 characters (43 when several are created at once)'),
  remain_quota: {
    type: 'number',
    description: 'Quota the token may still spend: an integer ≥ 0 (500000 = 1 USD); default 500000 on create',
  },
  unlimited_quota: { type: 'boolean', description: 'Whether the token ignores remain_quota; default false' },
  expired_time: {
    anyOf: [{ type: 'number' }, { type: 'string', maxLength: 64 }],
    description: 'Expiry: Unix seconds, or text yyyy-MM-dd HH:mm:ss in the server time zone; -1 means never (default)',
  },
  model_limits_enabled: { type: 'boolean', description: 'Whether only the models in model_limits may be used' },
  model_limits: text('Comma-separated model names the token may use when model_limits_enabled', 65_536),
  allow_ips: text('IP addresses or CIDRs allowed to use the token, one per line; empty allows any', 65_536),
  group: text('Group the token bills in: empty for the owner group, auto, or one of the owner usable groups', 256),
  cross_group_retry: { type: 'boolean', description: 'With group auto: retry in the next auto group on failure' },
  ...periodLimitSchema,
  rate_limits: rateLimitsSchema,
} as const;

/** /api/token/*: a user's own API keys (spec doc 2 §7 "Tokens", reference §2.5). */
export function tokenRoutes(app: FastifyInstance, deps: TokenRouteDeps): void {
  const { guards, tokens } = deps;

  app.get<{ Querystring: PagingInput }>(
    '/token/',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary: 'List own tokens, newest first, keys masked (POST /api/token/{id}/key reveals one)',
        querystring: { type: 'object', properties: pagingQuery },
      },
    },
    async (request) => {
      const { page, pageSize, offset } = paging(request.query);
      const { items, total } = await tokens.list({ offset, limit: pageSize }, signedIn(request).user);
      return ok(pageOf(items, total, page, pageSize));
    },
  );

  app.get<{ Querystring: PagingInput & { keyword?: string; token?: string } }>(
    '/token/search',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary: 'Search own tokens by name and/or key',
        querystring: {
          type: 'object',
          properties: {
            ...pagingQuery,
            keyword: text('Part of the token name'),
            token: text('A full key, with or without sk- (matched exactly)'),
          },
        },
      },
    },
    async (request) => {
      const { page, pageSize, offset } = paging(request.query);
      const { keyword, token } = request.query;
      const { items, total } = await tokens.list(
        { filters: { keyword, token }, offset, limit: pageSize },
        signedIn(request).user,
      );
      return ok(pageOf(items, total, page, pageSize));
    },
  );

  app.get<{ Params: { id: number } }>(
    '/token/:id',
    { preHandler: guards.user, schema: { tags, summary: 'One own token', params: idSchema } },
    async (request) => ok(await tokens.get(request.params.id, signedIn(request).user)),
  );

  app.post<{ Params: { id: number } }>(
    '/token/:id/key',
    {
      preHandler: [deps.critical, guards.user, guards.stepUp],
      schema: {
        tags,
        summary: 'The full key of an own token, as {key}, without sk- (clients put sk- in front)',
        params: idSchema,
      },
    },
    async (request) => ok({ key: await tokens.revealKey(request.params.id, signedIn(request).user) }),
  );

  app.post<{ Body: { ids: number[] } }>(
    '/token/batch/keys',
    {
      preHandler: [deps.critical, guards.user, guards.stepUp],
      schema: {
        tags,
        summary: 'The full keys of several own tokens, as {keys: {id: key}} without sk-; other ids are left out',
        body: {
          type: 'object',
          required: ['ids'],
          properties: { ids: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'integer', minimum: 1 } } },
        },
      },
    },
    async (request) => ok({ keys: await tokens.revealKeys(request.body.ids, signedIn(request).user) }),
  );

  app.post<{ Body: TokenCreate }>(
    '/token/',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary:
          'Create a token, or several with count (answers the token, or a list when count is sent, each with its full key without sk-)',
        body: {
          type: 'object',
          properties: {
            ...tokenFields,
            count: {
              type: 'integer',
              description: 'Create this many (1-100), named <name>-<6 random letters/digits> when more than one',
            },
          },
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const created = await tokens.create(body, signedIn(request).user);
      return ok(
        body.count === undefined ? created[0] : created,
        say(request, { zh: '令牌创建成功', en: 'Token created' }),
      );
    },
  );

  app.put<{ Body: TokenUpdate & { status?: number }; Querystring: { status_only?: string } }>(
    '/token/',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary: 'Update an own token, or with status_only only enable (1) or disable (2) it',
        querystring: statusOnlyQuery,
        body: {
          type: 'object',
          required: ['id'],
          properties: {
            id: { type: 'integer', minimum: 1, description: 'Token id' },
            status: { type: 'integer', description: 'With status_only: 1 enable, 2 disable' },
            ...tokenFields,
          },
        },
      },
    },
    async (request) => {
      const actor = signedIn(request).user;
      const statusOnly = isStatusOnly(request.query);
      const token = statusOnly
        ? await tokens.setStatus(request.body.id, request.body.status ?? 0, actor)
        : // As in new-api, a full edit leaves the status alone; only status_only changes it.
          await tokens.update({ ...request.body, status: undefined }, actor);
      return ok(token, say(request, { zh: '令牌更新成功', en: 'Token updated' }));
    },
  );

  // The console calls DELETE /api/token/{id}/ (spec doc 2 §7): with and without the trailing slash.
  for (const path of ['/token/:id', '/token/:id/']) {
    app.delete<{ Params: { id: number } }>(
      path,
      {
        preHandler: guards.user,
        schema: { tags, summary: 'Delete an own token', params: idSchema, hide: path.endsWith('/') },
      },
      async (request) => {
        await tokens.delete(request.params.id, signedIn(request).user);
        return ok(undefined, say(request, { zh: '令牌已删除', en: 'Token deleted' }));
      },
    );
  }

  app.post<{ Body: { ids: number[] } }>(
    '/token/batch',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary: 'Delete several own tokens; answers how many were deleted',
        body: {
          type: 'object',
          required: ['ids'],
          properties: {
            ids: {
              type: 'array',
              minItems: 1,
              maxItems: 1000,
              items: { type: 'integer', minimum: 1 },
              description: 'Token ids; ids of other users are ignored',
            },
          },
        },
      },
    },
    async (request) => {
      const count = await tokens.deleteMany(request.body.ids, signedIn(request).user);
      return ok(count, say(request, { zh: `已删除 ${count} 个令牌`, en: `Deleted ${count} tokens` }));
    },
  );
}
