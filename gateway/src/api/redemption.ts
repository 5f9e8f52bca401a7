import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RedemptionCreate, RedemptionService, RedemptionUpdate } from '../domain/redemptions/index.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { idParams, isStatusOnly, statusOnlyQuery, text } from './schemas.ts';

export interface RedemptionRouteDeps {
  guards: ReturnType<typeof authGuards>;
  /** The per-IP limit for guessable secrets: redeeming is where codes would be guessed. */
  critical: (request: FastifyRequest) => Promise<void>;
  redemptions: RedemptionService;
}

const tags = ['redemption'];

const idSchema = idParams('Redemption code id');

export const codeFields = {
  name: text('Name, 1-20 characters', 256),
  quota: { type: 'number', description: 'Quota each code adds to a wallet: an integer > 0 (500000 = 1 USD)' },
  expired_time: {
    anyOf: [{ type: 'number' }, { type: 'string', maxLength: 64 }],
    description: 'Expiry: Unix seconds, or text yyyy-MM-dd HH:mm:ss in the server time zone; 0 means never (default)',
  },
} as const;

/** /api/redemption/* (administrators) and POST /api/user/topup (users redeem), spec doc 2 §7. */
export function redemptionRoutes(app: FastifyInstance, deps: RedemptionRouteDeps): void {
  const { guards, redemptions } = deps;

  const list = async (request: FastifyRequest<{ Querystring: PagingInput & { keyword?: string } }>) => {
    const { page, pageSize, offset } = paging(request.query);
    const { items, total } = await redemptions.list(
      { filters: { keyword: request.query.keyword }, offset, limit: pageSize },
      signedIn(request).user,
    );
    return ok(pageOf(items, total, page, pageSize));
  };
  app.get<{ Querystring: PagingInput }>(
    '/redemption/',
    {
      preHandler: guards.admin,
      schema: { tags, summary: 'List codes, newest first', querystring: { type: 'object', properties: pagingQuery } },
    },
    list,
  );
  app.get<{ Querystring: PagingInput & { keyword?: string } }>(
    '/redemption/search',
    {
      preHandler: guards.admin,
      schema: {
        tags,
        summary: 'Search codes by id or name',
        querystring: {
          type: 'object',
          properties: { ...pagingQuery, keyword: text('A code id, or part of its name') },
        },
      },
    },
    list,
  );

  app.get<{ Params: { id: number } }>(
    '/redemption/:id',
    { preHandler: guards.admin, schema: { tags, summary: 'One code', params: idSchema } },
    async (request) => ok(await redemptions.get(request.params.id, signedIn(request).user)),
  );

  app.post<{ Body: RedemptionCreate }>(
    '/redemption/',
    {
      preHandler: guards.admin,
      schema: {
        tags,
        summary: 'Generate codes; answers the list of new 32-character codes',
        body: {
          type: 'object',
          properties: {
            ...codeFields,
            quota: { ...codeFields.quota, description: `${codeFields.quota.description}; default 100000` },
            count: { type: 'integer', description: 'How many codes to generate, 1-100; default 1' },
          },
        },
      },
    },
    async (request) => {
      const keys = (await redemptions.create(request.body ?? {}, signedIn(request).user)).map((code) => code.key);
      return ok(keys, say(request, { zh: '兑换码创建成功', en: 'Redemption codes created' }));
    },
  );

  app.put<{ Body: RedemptionUpdate & { status?: number }; Querystring: { status_only?: string } }>(
    '/redemption/',
    {
      preHandler: guards.admin,
      schema: {
        tags,
        summary: 'Edit an unused code, or with status_only only enable (1) or disable (2) it',
        querystring: statusOnlyQuery,
        body: {
          type: 'object',
          required: ['id'],
          properties: {
            id: { type: 'integer', minimum: 1, description: 'Redemption code id' },
            status: { type: 'integer', description: 'With status_only: 1 enable, 2 disable' },
            ...codeFields,
          },
        },
      },
    },
    async (request) => {
      const actor = signedIn(request).user;
      const statusOnly = isStatusOnly(request.query);
      const code = statusOnly
        ? await redemptions.setStatus(request.body.id, request.body.status ?? 0, actor)
        : // As in new-api, a full edit leaves the status alone; only status_only changes it.
          await redemptions.update({ ...request.body, status: undefined }, actor);
      return ok(code, say(request, { zh: '兑换码更新成功', en: 'Redemption code updated' }));
    },
  );

  app.delete(
    '/redemption/invalid',
    {
      preHandler: guards.admin,
      schema: { tags, summary: 'Delete used, disabled and expired codes; answers how many' },
    },
    async (request) => {
      const count = await redemptions.deleteInvalid(signedIn(request).user);
      return ok(count, say(request, { zh: `已删除 ${count} 个无效兑换码`, en: `Deleted ${count} invalid codes` }));
    },
  );

  // The console calls DELETE /api/redemption/{id}/ (spec doc 2 §7): with and without the trailing slash.
  for (const path of ['/redemption/:id', '/redemption/:id/']) {
    app.delete<{ Params: { id: number } }>(
      path,
      {
        preHandler: guards.admin,
        schema: { tags, summary: 'Delete a code', params: idSchema, hide: path.endsWith('/') },
      },
      async (request) => {
        await redemptions.delete(request.params.id, signedIn(request).user);
        return ok(undefined, say(request, { zh: '兑换码已删除', en: 'Redemption code deleted' }));
      },
    );
  }

  app.post<{ Body: { key?: string } }>(
    '/user/topup',
    {
      preHandler: [deps.critical, guards.user],
      schema: {
        tags: ['redemption', 'user'],
        summary: 'Redeem a code into the signed-in user wallet; answers the quota added',
        body: { type: 'object', properties: { key: text('The redemption code', 256) } },
      },
    },
    async (request) => {
      const quota = await redemptions.redeem(request.body?.key, signedIn(request).user);
      return ok(quota, say(request, { zh: '兑换成功！', en: 'Redeemed successfully!' }));
    },
  );
}
