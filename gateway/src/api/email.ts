import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EmailService } from '../domain/accounts/email.ts';
import type { Turnstile } from '../domain/accounts/turnstile.ts';
import { requestLanguage } from '../http/errors.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';

export interface EmailRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: (request: FastifyRequest) => Promise<void>;
  turnstile: Turnstile;
  email: EmailService;
}

const address = { type: 'string', maxLength: 254 } as const;
const str = { type: 'string', maxLength: 256 } as const;
const emailQuery = {
  type: 'object',
  properties: { email: address, turnstile: { type: 'string', maxLength: 4096 } },
} as const;
const bindFields = { type: 'object', properties: { email: address, code: str } } as const;
const codeSent = {
  zh: '验证码发送成功，请检查邮箱',
  en: 'The verification code has been sent, please check your mailbox',
};
const bound = { zh: '邮箱账户绑定成功！', en: 'Email bound successfully!' };

/**
 * The email flows: sign-up codes, password reset (spec doc 2 §7) and email bind (spec doc 1 §7).
 * A missing or malformed email answers 400 from the domain (EMAIL_REQUIRED / EMAIL_INVALID), so the
 * schemas only bound types and lengths.
 */
export function emailRoutes(app: FastifyInstance, deps: EmailRouteDeps): void {
  const { guards, critical } = deps;
  const human = async (request: FastifyRequest) =>
    deps.turnstile.check((request.query as { turnstile?: string }).turnstile, request.ip);

  app.get<{ Querystring: { email?: string; turnstile?: string } }>(
    '/verification',
    { preHandler: [critical, human], schema: { querystring: emailQuery } },
    async (request) => {
      await deps.email.sendVerificationCode(request.query.email, requestLanguage(request));
      return ok(undefined, say(request, codeSent));
    },
  );

  app.get<{ Querystring: { email?: string; turnstile?: string } }>(
    '/reset_password',
    { preHandler: [critical, human], schema: { querystring: emailQuery } },
    async (request) => {
      await deps.email.sendResetLink(request.query.email, requestLanguage(request));
      // The same answer whether or not the address has an account.
      return ok(
        undefined,
        say(request, {
          zh: '如果该邮箱已注册，重置邮件已发送，请检查邮箱',
          en: 'If an account uses this address, a reset link has been sent to it, please check your mailbox',
        }),
      );
    },
  );

  app.post<{ Body: { email?: string; token?: string } }>(
    '/user/reset',
    {
      preHandler: critical,
      schema: { body: { type: 'object', properties: { email: address, token: str } } },
    },
    async (request) => {
      const password = await deps.email.resetPassword(request.body?.email, request.body?.token);
      return ok(password, say(request, { zh: '密码已重置', en: 'The password has been reset' }));
    },
  );

  // Sends the code for binding an email to the signed-in account. new-api's console uses GET
  // /api/verification for this too (and bind accepts that code); this route also lets an address be
  // re-sent to its owner and says EMAIL_TAKEN only when another account has it.
  app.get<{ Querystring: { email?: string } }>(
    '/oauth/email/bind/code',
    {
      preHandler: [critical, guards.user],
      schema: { querystring: { type: 'object', properties: { email: address } } },
    },
    async (request) => {
      await deps.email.sendBindCode(signedIn(request).user, request.query.email, requestLanguage(request));
      return ok(undefined, say(request, codeSent));
    },
  );

  // Spec doc 1 §7 sends email and code as a query (GET); new-api's router takes POST (reference §2.1),
  // with the fields in a JSON body or, as its console does, in the query.
  app.get<{ Querystring: { email?: string; code?: string } }>(
    '/oauth/email/bind',
    { preHandler: [critical, guards.user], schema: { querystring: bindFields } },
    async (request) => {
      await deps.email.bindEmail(signedIn(request).user, request.query.email, request.query.code);
      return ok(undefined, say(request, bound));
    },
  );

  app.post<{ Body: { email?: string; code?: string }; Querystring: { email?: string; code?: string } }>(
    '/oauth/email/bind',
    {
      // A POST with the fields in the query has no body at all; validate it as an empty object.
      preValidation: async (request) => {
        request.body ??= {};
      },
      preHandler: [critical, guards.user],
      schema: { querystring: bindFields, body: bindFields },
    },
    async (request) => {
      const fields = { ...request.query, ...request.body };
      await deps.email.bindEmail(signedIn(request).user, fields.email, fields.code);
      return ok(undefined, say(request, bound));
    },
  );
}
