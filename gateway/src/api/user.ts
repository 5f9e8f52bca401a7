import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserAdminService } from '../domain/accounts/admin.ts';
import { ACCOUNT_ERRORS } from '../domain/accounts/errors.ts';
import type { LoginService } from '../domain/accounts/login.ts';
import { MANAGE_ACTIONS, type ManageAction } from '../domain/accounts/permissions.ts';
import type { RegistrationInput, RegistrationService } from '../domain/accounts/registration.ts';
import type { SelfService, SelfUpdate } from '../domain/accounts/self.ts';
import type { SessionService } from '../domain/accounts/sessions.ts';
import type { UserSettingInput } from '../domain/accounts/settings.ts';
import type { Turnstile } from '../domain/accounts/turnstile.ts';
import type { TwoFactorService } from '../domain/accounts/two-factor/service.ts';
import { selfView, sessionUserView, userView } from '../domain/accounts/view.ts';
import { groupNames, usableGroups } from '../domain/groups.ts';
import type { Keyring } from '../domain/keyring.ts';
import type { PeriodBudget } from '../domain/ledger/periods/budget.ts';
import type { PeriodLimitFields } from '../domain/ledger/periods/limits.ts';
import { parsePeriodLimits } from '../domain/ledger/periods/limits.ts';
import type { OptionsService } from '../domain/options/index.ts';
import { AppError } from '../errors.ts';
import { requestCookie } from '../http/cookies.ts';
import type { authGuards } from './auth.ts';
import { clearSessionCookie, SESSION_COOKIE, setSessionCookie, signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { periodLimitSchema } from './period-limits.ts';
import { idParams, rateLimitsSchema } from './schemas.ts';
import { askForSecondFactor } from './two-factor.ts';

export interface UserRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: (request: FastifyRequest) => Promise<void>;
  turnstile: Turnstile;
  sessions: SessionService;
  login: LoginService;
  registration: RegistrationService;
  admin: UserAdminService;
  self: SelfService;
  options: OptionsService;
  keyring: Keyring;
  periods: PeriodBudget;
  twoFactor: TwoFactorService;
}

const str = { type: 'string', maxLength: 4096 } as const;
const turnstileQuery = { type: 'object', properties: { turnstile: str } } as const;
const client = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] ?? '' });

/** /api/user/* and /api/group/: sign-up, sign-in, self-service and user management (spec doc 1 §7). */
export function userRoutes(app: FastifyInstance, deps: UserRouteDeps): void {
  const { guards, keyring } = deps;
  const view = (user: Parameters<typeof userView>[0]) => userView(user, keyring);
  const human = async (request: FastifyRequest) =>
    deps.turnstile.check((request.query as { turnstile?: string }).turnstile, request.ip);

  app.post<{ Body: RegistrationInput; Querystring: { turnstile?: string } }>(
    '/user/register',
    {
      preHandler: [deps.critical, human],
      schema: {
        querystring: turnstileQuery,
        body: {
          type: 'object',
          properties: {
            username: str,
            password: str,
            password2: str,
            email: str,
            verification_code: str,
            aff_code: str,
          },
        },
      },
    },
    async (request) => {
      await deps.registration.register(request.body ?? {});
      return ok(undefined, say(request, { zh: '注册成功', en: 'Registration successful' }));
    },
  );

  app.post<{ Body: { username?: string; password?: string }; Querystring: { turnstile?: string } }>(
    '/user/login',
    {
      preHandler: [deps.critical, human],
      schema: { querystring: turnstileQuery, body: { type: 'object', properties: { username: str, password: str } } },
    },
    async (request, reply) => {
      const checked = await deps.login.checkPassword(request.body ?? {});
      // A user with two-factor sign-in gets a pending sign-in, not a session (POST /user/login/2fa ends it).
      if (await deps.twoFactor.isEnabled(checked.user.id))
        return askForSecondFactor(request, reply, deps.twoFactor, checked.user.id);
      const signedIn = { ...checked, ...(await deps.login.startSession(checked.user, client(request))) };
      setSessionCookie(request, reply, signedIn.sessionId, deps.sessions.ttlSeconds);
      const message = signedIn.usesDefaultPassword
        ? say(request, {
            zh: '你正在使用默认密码，请立刻修改！',
            en: 'You are using the default password, change it immediately!',
          })
        : say(request, { zh: '登录成功', en: 'Login successful' });
      return ok(sessionUserView(signedIn.user), message);
    },
  );

  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    const sessionId = requestCookie(request, SESSION_COOKIE);
    if (sessionId) await deps.sessions.revoke(sessionId);
    clearSessionCookie(reply);
    return ok(undefined, say(request, { zh: '登出成功', en: 'Logout successful' }));
  };
  // GET is the spec's and new-api's classic front end's; its newer front end posts /user/auth/logout.
  app.route({ method: ['GET', 'POST'], url: '/user/logout', handler: logout });
  app.post('/user/auth/logout', logout);

  app.get('/user/groups', async () => ok(usableGroups(deps.options, 'default')));

  // --- self-service ---
  app.get('/user/self', { preHandler: guards.user }, async (request) => {
    const user = signedIn(request).user;
    // The current daily, weekly and monthly periods with a limit: use and what is left.
    const usage = await deps.periods.current('user', [{ id: user.id, limits: parsePeriodLimits(user.period_limits) }]);
    return ok({ ...selfView(await deps.self.shown(user), keyring), period_usage: usage.get(user.id) ?? {} });
  });

  app.put<{ Body: SelfUpdate }>(
    '/user/self',
    {
      preHandler: guards.user,
      schema: {
        body: {
          type: 'object',
          properties: { username: str, display_name: str, password: str, original_password: str },
        },
      },
    },
    async (request) => {
      const auth = signedIn(request);
      const updated = await deps.self.update(auth.user, request.body ?? {}, auth.sessionIdHash);
      return ok(selfView(await deps.self.shown(updated), keyring), say(request, { zh: '更新成功', en: 'Updated' }));
    },
  );

  // new-api's clients send no body: the signed-in session (with its New-Api-User header) is the consent,
  // as in new-api. A username, when one is sent (our console sends the typed one), must still match.
  app.delete<{ Body: { username?: string } | undefined; Querystring: { username?: string } }>(
    '/user/self',
    {
      preHandler: guards.user,
      schema: { querystring: { type: 'object', properties: { username: str } } },
    },
    async (request, reply) => {
      const body = request.body as { username?: unknown } | undefined;
      const confirmation = typeof body?.username === 'string' ? body.username : request.query.username;
      await deps.self.delete(signedIn(request).user, confirmation);
      clearSessionCookie(reply);
      return ok(undefined, say(request, { zh: '账户已注销', en: 'Account deleted' }));
    },
  );

  app.get('/user/self/groups', { preHandler: guards.user }, async (request) =>
    ok(deps.self.groups(signedIn(request).user)),
  );
  app.get('/user/models', { preHandler: guards.user }, async (request) =>
    ok(await deps.self.models(signedIn(request).user)),
  );
  app.get('/user/token', { preHandler: guards.user }, async (request) =>
    ok(await deps.self.regenerateAccessToken(signedIn(request).user)),
  );
  app.get('/user/aff', { preHandler: guards.user }, async (request) =>
    ok(await deps.self.affCode(signedIn(request).user)),
  );

  app.post<{ Body: { quota: number } }>(
    '/user/aff_transfer',
    {
      preHandler: guards.user,
      schema: { body: { type: 'object', required: ['quota'], properties: { quota: { type: 'number' } } } },
    },
    async (request) => {
      await deps.self.transferAffQuota(signedIn(request).user, request.body.quota);
      return ok(undefined, say(request, { zh: '划转成功', en: 'Transferred' }));
    },
  );

  app.put<{ Body: UserSettingInput }>(
    '/user/setting',
    {
      preHandler: guards.user,
      schema: {
        body: {
          type: 'object',
          properties: {
            notify_type: str,
            quota_warning_threshold: { type: 'number' },
            webhook_url: str,
            webhook_secret: str,
            notification_email: str,
            bark_url: str,
            gotify_url: str,
            gotify_token: str,
            gotify_priority: { type: 'integer' },
            accept_unset_model_ratio_model: { type: 'boolean' },
          },
        },
      },
    },
    async (request) => {
      await deps.self.saveSetting(signedIn(request).user, request.body ?? {});
      return ok(undefined, say(request, { zh: '设置已更新', en: 'Settings updated' }));
    },
  );

  // --- user management (administrators) ---
  const listQuery = { type: 'object', properties: { ...pagingQuery, keyword: str, group: str } } as const;
  const list = async (query: PagingInput & { keyword?: string; group?: string }) => {
    const { page, pageSize, offset } = paging(query);
    const { items, total } = await deps.admin.search({
      keyword: query.keyword,
      group: query.group,
      offset,
      limit: pageSize,
    });
    return ok(pageOf(items.map(view), total, page, pageSize));
  };
  app.get<{ Querystring: PagingInput & { keyword?: string; group?: string } }>(
    '/user/',
    { preHandler: guards.admin, schema: { querystring: listQuery } },
    async (request) => list(request.query),
  );
  app.get<{ Querystring: PagingInput & { keyword?: string; group?: string } }>(
    '/user/search',
    { preHandler: guards.admin, schema: { querystring: listQuery } },
    async (request) => list(request.query),
  );

  const userIdParams = idParams('User id');
  app.get<{ Params: { id: number } }>(
    '/user/:id',
    { preHandler: guards.admin, schema: { params: userIdParams } },
    async (request) => ok(view(await deps.admin.get(signedIn(request).user, request.params.id))),
  );

  app.post<{ Body: { username?: string; display_name?: string; password?: string; role?: number } }>(
    '/user/',
    {
      preHandler: guards.admin,
      schema: {
        body: {
          type: 'object',
          properties: { username: str, display_name: str, password: str, role: { type: 'integer' } },
        },
      },
    },
    async (request) => {
      const user = await deps.admin.create(signedIn(request).user, request.body ?? {});
      return ok(view(user), say(request, { zh: '用户创建成功', en: 'User created' }));
    },
  );

  app.put<{
    Body: {
      id: number;
      username?: string;
      display_name?: string;
      password?: string;
      group?: string;
      quota?: number;
      remark?: string;
      rate_limits?: Record<string, { rpm?: number; tpm?: number }>;
    } & Partial<PeriodLimitFields>;
  }>(
    '/user/',
    {
      preHandler: guards.admin,
      schema: {
        body: {
          type: 'object',
          required: ['id'],
          properties: {
            id: { type: 'integer', minimum: 1 },
            username: str,
            display_name: str,
            password: str,
            group: str,
            quota: { type: 'number' },
            remark: str,
            ...periodLimitSchema,
            rate_limits: rateLimitsSchema,
          },
        },
      },
    },
    async (request) => {
      const actor = signedIn(request).user;
      const { quota } = request.body;
      // Changing another user's quota is a sensitive action (step-up); an edit that leaves it alone is not.
      if (quota !== undefined && quota !== (await deps.admin.get(actor, request.body.id)).quota) {
        await guards.stepUp(request);
      }
      const user = await deps.admin.update(actor, request.body);
      return ok(view(user), say(request, { zh: '用户信息更新成功', en: 'User updated' }));
    },
  );

  app.post<{ Body: { id: number; action: string; mode?: string; value?: number; idempotency_key?: string } }>(
    '/user/manage',
    {
      preHandler: guards.admin,
      schema: {
        body: {
          type: 'object',
          required: ['id', 'action'],
          properties: {
            id: { type: 'integer', minimum: 1 },
            action: { ...str, description: 'promote, demote, enable, disable, delete, or add_quota' },
            mode: { ...str, description: 'add_quota: add, subtract (value > 0) or override (the new quota)' },
            value: { type: 'number', description: 'add_quota: an integer amount of quota' },
            idempotency_key: {
              type: 'string',
              pattern: '^[A-Za-z0-9_.:-]{1,128}$',
              description: 'add_quota: one per submit; a repeat of an applied key changes nothing',
            },
          },
        },
      },
    },
    async (request) => {
      const { id, action, mode, value, idempotency_key: idempotencyKey } = request.body;
      const done = say(request, { zh: '操作成功完成', en: 'Done' });
      if (action === 'add_quota') {
        await guards.stepUp(request);
        const { user, quota } = await deps.admin.adjustQuota(signedIn(request).user, id, {
          mode,
          value,
          idempotencyKey,
        });
        return ok({ status: user.status, role: user.role, quota }, done);
      }
      if (!MANAGE_ACTIONS.includes(action as ManageAction)) throw new AppError(ACCOUNT_ERRORS.INVALID_ACTION);
      const user = await deps.admin.manage(signedIn(request).user, id, action as ManageAction);
      return ok({ status: user.status, role: user.role }, done);
    },
  );

  app.delete<{ Params: { id: number } }>(
    '/user/:id',
    { preHandler: guards.admin, schema: { params: userIdParams } },
    async (request) => {
      await deps.admin.manage(signedIn(request).user, request.params.id, 'delete');
      return ok(undefined, say(request, { zh: '用户已注销', en: 'User deleted' }));
    },
  );

  app.get('/group/', { preHandler: guards.admin }, async () => ok(groupNames(deps.options)));
}
