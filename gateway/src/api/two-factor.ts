import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LoginService } from '../domain/accounts/login.ts';
import type { SessionService } from '../domain/accounts/sessions.ts';
import { CHALLENGE_SECONDS, type TwoFactorService } from '../domain/accounts/two-factor/service.ts';
import { sessionUserView } from '../domain/accounts/view.ts';
import { requestCookie } from '../http/cookies.ts';
import type { authGuards } from './auth.ts';
import { setSessionCookie, signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { idParams } from './schemas.ts';

export interface TwoFactorRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: (request: FastifyRequest) => Promise<void>;
  twoFactor: TwoFactorService;
  login: LoginService;
  sessions: SessionService;
}

/** Holds the pending sign-in for clients that send only `{code}` (new-api's classic front end). */
const PENDING_COOKIE = 'two_factor_pending';
const PENDING_PATH = '/api/user/login';

const code = { type: 'string', maxLength: 64 } as const;
const codeBody = { type: 'object', properties: { code } } as const;
const tags = ['two-factor'];

/**
 * The answer to a password sign-in of a user with two-factor sign-in: `require_2fa` and the pending
 * sign-in's token (also in a short-lived cookie), no session.
 */
export async function askForSecondFactor(
  request: FastifyRequest,
  reply: FastifyReply,
  twoFactor: TwoFactorService,
  userId: number,
) {
  const flowToken = await twoFactor.startChallenge(userId);
  reply.setCookie(PENDING_COOKIE, flowToken, {
    path: PENDING_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    maxAge: CHALLENGE_SECONDS,
  });
  return ok(
    { require_2fa: true, flow_token: flowToken },
    say(request, { zh: '请输入两步验证码', en: 'Enter your two-factor code' }),
  );
}

/** /api/user/2fa/*, /api/user/login/2fa and /api/verify, in new-api's paths and shapes. */
export function twoFactorRoutes(app: FastifyInstance, deps: TwoFactorRouteDeps): void {
  const { guards, critical, twoFactor } = deps;

  app.get('/user/2fa/status', { preHandler: guards.user, schema: { tags } }, async (request) =>
    ok(await twoFactor.status(signedIn(request).user.id)),
  );

  app.post('/user/2fa/setup', { preHandler: [critical, guards.user], schema: { tags } }, async (request) =>
    ok(
      await twoFactor.setup(signedIn(request).user),
      say(request, {
        zh: '2FA设置初始化成功，请使用认证器扫描二维码并输入验证码完成设置',
        en: 'Scan the QR code with an authenticator app and enter its code to finish',
      }),
    ),
  );

  app.post<{ Body: { code?: string } }>(
    '/user/2fa/enable',
    { preHandler: [critical, guards.user], schema: { tags, body: codeBody } },
    async (request) => {
      await twoFactor.enable(signedIn(request).user.id, request.body?.code);
      return ok(undefined, say(request, { zh: '两步验证启用成功', en: 'Two-factor sign-in enabled' }));
    },
  );

  app.post<{ Body: { code?: string } }>(
    '/user/2fa/disable',
    { preHandler: [critical, guards.user], schema: { tags, body: codeBody } },
    async (request) => {
      await twoFactor.disable(signedIn(request).user.id, request.body?.code);
      return ok(undefined, say(request, { zh: '两步验证已禁用', en: 'Two-factor sign-in disabled' }));
    },
  );

  app.post<{ Body: { code?: string } }>(
    '/user/2fa/backup_codes',
    { preHandler: [critical, guards.user], schema: { tags, body: codeBody } },
    async (request) => {
      const codes = await twoFactor.regenerateBackupCodes(signedIn(request).user.id, request.body?.code);
      return ok({ backup_codes: codes }, say(request, { zh: '备用码重新生成成功', en: 'New backup codes made' }));
    },
  );

  app.post<{ Body: { code?: string; flow_token?: string } }>(
    '/user/login/2fa',
    {
      preHandler: critical,
      schema: { tags, body: { type: 'object', properties: { code, flow_token: { type: 'string', maxLength: 128 } } } },
    },
    async (request, reply) => {
      const token = request.body?.flow_token || requestCookie(request, PENDING_COOKIE);
      const user = await twoFactor.completeChallenge(token, request.body?.code);
      const client = { ip: request.ip, userAgent: request.headers['user-agent'] ?? '' };
      const session = await deps.login.startSession(user, client);
      reply.clearCookie(PENDING_COOKIE, { path: PENDING_PATH });
      setSessionCookie(request, reply, session.sessionId, deps.sessions.ttlSeconds);
      return ok(sessionUserView(session.user), say(request, { zh: '登录成功', en: 'Login successful' }));
    },
  );

  app.post<{ Body: { method?: string; code?: string } }>(
    '/verify',
    {
      preHandler: [critical, guards.user],
      schema: { tags, body: { type: 'object', properties: { method: { type: 'string', maxLength: 32 }, code } } },
    },
    async (request) =>
      ok(
        await twoFactor.stepUp(signedIn(request), request.body?.method, request.body?.code),
        say(request, { zh: '验证成功', en: 'Verified' }),
      ),
  );

  app.get('/verify/status', { preHandler: guards.user, schema: { tags } }, async (request) =>
    ok(await twoFactor.verification(signedIn(request))),
  );

  // --- administrators ---
  app.get('/user/2fa/stats', { preHandler: guards.admin, schema: { tags } }, async () => ok(await twoFactor.stats()));

  app.delete<{ Params: { id: number } }>(
    '/user/:id/2fa',
    { preHandler: guards.admin, schema: { tags, params: idParams('User id') } },
    async (request) => {
      await twoFactor.reset(signedIn(request).user, request.params.id);
      return ok(undefined, say(request, { zh: '用户2FA已被强制禁用', en: "The user's two-factor sign-in was reset" }));
    },
  );
}
