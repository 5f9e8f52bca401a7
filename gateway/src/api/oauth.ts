import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthOutcome, OAuthService } from '../domain/accounts/oauth/service.ts';
import { STATE_TTL_MS } from '../domain/accounts/oauth/state.ts';
import type { TelegramWidgetFields } from '../domain/accounts/oauth/telegram.ts';
import type { SessionService } from '../domain/accounts/sessions.ts';
import type { TwoFactorService } from '../domain/accounts/two-factor/service.ts';
import { sessionUserView } from '../domain/accounts/view.ts';
import { requestCookie } from '../http/cookies.ts';
import type { UserRow } from '../store/database.ts';
import { type authGuards, setSessionCookie, signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { askForSecondFactor } from './two-factor.ts';

export interface OAuthRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: (request: FastifyRequest) => Promise<void>;
  sessions: SessionService;
  oauth: OAuthService;
  twoFactor: TwoFactorService;
}

/** Holds the state this browser was issued; the callback must come from the same browser. */
const STATE_COOKIE = 'oauth_state';
const STATE_COOKIE_PATH = '/api/oauth';
const str = { type: 'string', maxLength: 4096 } as const;
const codeQuery = { type: 'object', properties: { code: str, state: str } } as const;
/** Telegram's widget fields (id, first_name, …, hash) plus whatever the console adds, all text. */
const telegramQuery = { type: 'object', additionalProperties: { type: 'string', maxLength: 1024 } } as const;

const client = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] ?? '' });

/**
 * /api/oauth/*: third-party sign-in and binding (spec doc 1 §7, reference §2.1). Every route counts
 * against the per-IP critical limit. A binding answers message `bind` (what the console's callback
 * screen looks for); a sign-in sets the session cookie and answers the session user.
 */
export function oauthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): void {
  const { guards, critical, oauth } = deps;

  const answer = async (request: FastifyRequest, reply: FastifyReply, outcome: OAuthOutcome) => {
    if (outcome.kind === 'bind') return ok(undefined, 'bind');
    // A third-party account does not skip the second factor: the session (never sent) gives way to a
    // pending sign-in, ended by POST /api/user/login/2fa as after a password.
    if (await deps.twoFactor.isEnabled(outcome.user.id)) {
      await deps.sessions.revoke(outcome.sessionId);
      return askForSecondFactor(request, reply, deps.twoFactor, outcome.user.id);
    }
    setSessionCookie(request, reply, outcome.sessionId, deps.sessions.ttlSeconds);
    return ok(sessionUserView(outcome.user), say(request, { zh: '登录成功', en: 'Login successful' }));
  };

  /** The signed-in caller (session or access token, with a matching New-Api-User), if any. */
  const caller = async (request: FastifyRequest): Promise<UserRow | undefined> => {
    await guards.optional(request);
    return request.auth?.user;
  };

  const issueState = async (request: FastifyRequest, reply: FastifyReply, aff: string | undefined) => {
    const state = await oauth.issueState(aff);
    reply.setCookie(STATE_COOKIE, state, {
      path: STATE_COOKIE_PATH,
      httpOnly: true,
      // Lax, not strict: the browser comes back from the provider's site.
      sameSite: 'lax',
      secure: request.protocol === 'https',
      maxAge: STATE_TTL_MS / 1000,
    });
    return ok(state);
  };
  const aff = { type: 'string', maxLength: 64 } as const;
  app.get<{ Querystring: { aff?: string } }>(
    '/oauth/state',
    { preHandler: critical, schema: { querystring: { type: 'object', properties: { aff } } } },
    async (request, reply) => issueState(request, reply, request.query.aff),
  );
  // new-api's current front ends post {provider, intent, aff}; the state does not depend on the first two.
  app.post<{ Body: { aff?: string; provider?: string; intent?: string } }>(
    '/oauth/state',
    {
      preHandler: critical,
      schema: { body: { type: 'object', properties: { aff, provider: str, intent: str } } },
    },
    async (request, reply) => issueState(request, reply, request.body?.aff),
  );

  // A built-in provider's name or a custom provider's slug; unknown names get OAUTH_PROVIDER_UNKNOWN.
  app.get<{ Params: { provider: string }; Querystring: { code?: string; state?: string } }>(
    '/oauth/:provider',
    {
      preHandler: critical,
      schema: {
        params: {
          type: 'object',
          required: ['provider'],
          properties: { provider: { type: 'string', maxLength: 64 } },
        },
        querystring: codeQuery,
      },
    },
    async (request, reply) => {
      const browserState = requestCookie(request, STATE_COOKIE);
      // A state works once; the cookie goes whatever the outcome.
      if (browserState !== undefined) reply.clearCookie(STATE_COOKIE, { path: STATE_COOKIE_PATH });
      const outcome = await oauth.callback(
        request.params.provider,
        { code: request.query.code, state: request.query.state, browserState },
        { binder: await caller(request), client: client(request) },
      );
      return answer(request, reply, outcome);
    },
  );

  app.get<{ Querystring: { code?: string } }>(
    '/oauth/wechat',
    { preHandler: critical, schema: { querystring: codeQuery } },
    async (request, reply) => answer(request, reply, await oauth.wechatLogin(request.query.code, client(request))),
  );

  // Spec doc 1 §7 calls it with GET, new-api routes POST: both, with the code in the query (or a JSON body).
  app.route<{ Querystring: { code?: string }; Body: unknown }>({
    method: ['GET', 'POST'],
    url: '/oauth/wechat/bind',
    preHandler: [critical, guards.user],
    schema: { querystring: codeQuery },
    handler: async (request, reply) => {
      const body = request.body as { code?: unknown } | undefined;
      const code = request.query.code ?? (typeof body?.code === 'string' ? body.code : undefined);
      return answer(request, reply, await oauth.wechatBind(code, signedIn(request).user));
    },
  });

  app.get<{ Querystring: TelegramWidgetFields }>(
    '/oauth/telegram/login',
    { preHandler: critical, schema: { querystring: telegramQuery } },
    async (request, reply) => answer(request, reply, await oauth.telegramLogin({ ...request.query }, client(request))),
  );

  app.get<{ Querystring: TelegramWidgetFields }>(
    '/oauth/telegram/bind',
    { preHandler: [critical, guards.user], schema: { querystring: telegramQuery } },
    async (request, reply) =>
      answer(request, reply, await oauth.telegramBind({ ...request.query }, signedIn(request).user)),
  );
}
