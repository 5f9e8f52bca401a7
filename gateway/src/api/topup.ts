import { parse } from 'node:querystring';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { TopUpService } from '../domain/payments/service.ts';
import { type authGuards, signedIn } from './auth.ts';
import { ok, sendFailure } from './envelope.ts';

export interface TopUpRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: preHandlerHookHandler;
  topUps: TopUpService;
}

const tags = ['user'];
const amountBody = {
  type: 'object',
  properties: {
    amount: { type: ['integer', 'string'], description: 'US dollars of quota to buy' },
    top_up_code: { type: 'string', maxLength: 64, description: 'Unused (new-api compatibility)' },
    payment_method: { type: 'string', maxLength: 64, description: 'One of the PayMethods types' },
  },
} as const;

/**
 * new-api's top-up page shows `data` as the error when `message` is not "success", so refusals of the
 * pricing and ordering calls repeat their message in `data`.
 */
async function refusalWithData(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  return sendFailure(error, request, reply, true);
}

/** Online top-up (spec doc 2 §7): price an amount, order it, and the payment site's notification. */
export function topUpRoutes(app: FastifyInstance, { guards, critical, topUps }: TopUpRouteDeps): void {
  app.post<{ Body: { amount?: number | string } }>(
    '/user/amount',
    {
      preHandler: guards.user,
      errorHandler: refusalWithData,
      schema: { tags, summary: 'The money an amount of top-up costs', body: amountBody },
    },
    async (request) => ok(topUps.price(request.body?.amount, signedIn(request).user).toFixed(2), 'success'),
  );

  app.post<{ Body: { amount?: number | string; payment_method?: string } }>(
    '/user/pay',
    {
      preHandler: [critical, guards.user],
      errorHandler: refusalWithData,
      schema: {
        tags,
        summary: 'Order a top-up: answers the form fields the browser posts to `url`',
        body: amountBody,
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const form = await topUps.start(
        { amount: body.amount, paymentMethod: body.payment_method },
        signedIn(request).user,
      );
      return { ...ok(form.fields, 'success'), url: form.url };
    },
  );

  // The payment site's callback: GET with a query, or a form POST. It expects the bare word back.
  app.register(async (notify) => {
    notify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, parse(String(body))),
    );
    notify.route<{ Querystring: Record<string, string>; Body: Record<string, string> }>({
      method: ['GET', 'POST'],
      url: '/user/epay/notify',
      schema: { tags, summary: 'epay payment notification (signed); answers success or fail', hide: true },
      handler: async (request, reply) => {
        const params = { ...request.query, ...(typeof request.body === 'object' ? request.body : {}) };
        const accepted = await topUps.notify(params as Record<string, string>);
        return reply.type('text/plain').send(accepted ? 'success' : 'fail');
      },
    });
  });
}
