import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { TopUpService } from '../domain/payments/service.ts';
import { type authGuards, signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { dropEmptyQuery } from './query.ts';
import { text } from './schemas.ts';

export interface TopUpHistoryRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: preHandlerHookHandler;
  topUps: TopUpService;
}

const tags = ['user'];
const listQuery = {
  type: 'object',
  properties: { ...pagingQuery, keyword: text('Part of the order number (trade_no)', 128) },
} as const;
type ListQuery = PagingInput & { keyword?: string };

/** The wallet's top-up information and order history, and an administrator's manual completion of an order. */
export function topUpHistoryRoutes(app: FastifyInstance, { guards, critical, topUps }: TopUpHistoryRouteDeps): void {
  app.get(
    '/user/topup/info',
    {
      preHandler: guards.user,
      schema: {
        tags,
        summary:
          'What the wallet offers: enable_online_topup, pay_methods, min_topup, amount_options, discount (amount -> factor); Stripe and Creem are not served (false)',
      },
    },
    async () => ok(topUps.info()),
  );

  const list = (all: boolean) => async (request: FastifyRequest<{ Querystring: ListQuery }>) => {
    const { page, pageSize, offset } = paging(request.query);
    const query = { keyword: request.query.keyword, userId: all ? undefined : signedIn(request).user.id };
    const { items, total } = await topUps.list(query, { offset, limit: pageSize });
    return ok(pageOf(items, total, page, pageSize));
  };
  const fields = '{id, user_id, amount, money, trade_no, payment_method, status, create_time, complete_time}';
  app.get<{ Querystring: ListQuery }>(
    '/user/topup/self',
    {
      preValidation: dropEmptyQuery,
      preHandler: guards.user,
      schema: { tags, summary: `The signed-in user's top-up orders, newest first: ${fields}`, querystring: listQuery },
    },
    list(false),
  );
  app.get<{ Querystring: ListQuery }>(
    '/user/topup',
    {
      preValidation: dropEmptyQuery,
      preHandler: guards.admin,
      schema: { tags, summary: `Every user's top-up orders, newest first: ${fields}`, querystring: listQuery },
    },
    list(true),
  );

  app.post<{ Body: { trade_no: string } }>(
    '/user/topup/complete',
    {
      preHandler: [critical, guards.admin],
      schema: {
        tags,
        summary: 'Mark a pending order paid and credit its quota once (logged as a top-up); refuses any other order',
        body: {
          type: 'object',
          required: ['trade_no'],
          properties: { trade_no: { type: 'string', minLength: 1, maxLength: 128, description: 'The order number' } },
        },
      },
    },
    async (request) => {
      await topUps.completeManually(request.body.trade_no, signedIn(request).user);
      return ok(undefined, say(request, { zh: '补单成功', en: 'Order completed' }));
    },
  );
}
