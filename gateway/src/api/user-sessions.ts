import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserAdminService } from '../domain/accounts/admin.ts';
import type { SessionInfo, SessionService } from '../domain/accounts/sessions.ts';
import type { authGuards } from './auth.ts';
import { clearSessionCookie, signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { idParams } from './schemas.ts';

export interface SessionRouteDeps {
  guards: ReturnType<typeof authGuards>;
  sessions: SessionService;
  admin: UserAdminService;
}

/** A session's listed id: the stored digest (base64url SHA-256, 43 characters). */
const sessionId = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' } as const;

const view = (session: SessionInfo, currentIdHash: string | undefined) => ({
  id: session.id,
  created_at: session.createdAt,
  last_seen_at: session.lastSeenAt,
  expires_at: session.expiresAt,
  ip: session.ip,
  user_agent: session.userAgent,
  current: session.id === currentIdHash,
});

/**
 * /api/user/sessions: the signed-in user's sign-ins (created, last seen, address, browser, which one is this
 * one) and signing out one of them or every other one; /api/user/:id/sessions: the same for an administrator
 * over a user of a lower level. new-api serves no such routes; these follow its /api/user/* conventions.
 */
export function sessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const { guards, sessions } = deps;
  const target = (request: FastifyRequest, id: number) => deps.admin.get(signedIn(request).user, id);
  const revoked = (request: FastifyRequest) => say(request, { zh: '已退出该会话', en: 'Session signed out' });

  app.get('/user/sessions', { preHandler: guards.user }, async (request) => {
    const auth = signedIn(request);
    return ok((await sessions.list(auth.user.id)).map((s) => view(s, auth.sessionIdHash)));
  });

  app.delete<{ Params: { id: string } }>(
    '/user/sessions/:id',
    {
      preHandler: guards.user,
      schema: { params: { type: 'object', required: ['id'], properties: { id: sessionId } } },
    },
    async (request, reply: FastifyReply) => {
      const auth = signedIn(request);
      await sessions.revokeOne(auth.user.id, request.params.id);
      // Revoking the session that asked is signing out: the browser forgets the cookie too.
      if (request.params.id === auth.sessionIdHash) clearSessionCookie(reply);
      return ok(undefined, revoked(request));
    },
  );

  app.delete('/user/sessions', { preHandler: guards.user }, async (request) => {
    const auth = signedIn(request);
    await sessions.revokeAll(auth.user.id, auth.sessionIdHash);
    return ok(undefined, say(request, { zh: '已退出其他所有会话', en: 'Every other session signed out' }));
  });

  const userIdParams = idParams('User id');
  app.get<{ Params: { id: number } }>(
    '/user/:id/sessions',
    { preHandler: guards.admin, schema: { params: userIdParams } },
    async (request) => {
      const user = await target(request, request.params.id);
      return ok((await sessions.list(user.id)).map((s) => view(s, undefined)));
    },
  );

  app.delete<{ Params: { id: number; session_id: string } }>(
    '/user/:id/sessions/:session_id',
    {
      preHandler: guards.admin,
      schema: {
        params: {
          type: 'object',
          required: ['id', 'session_id'],
          properties: { id: userIdParams.properties.id, session_id: sessionId },
        },
      },
    },
    async (request) => {
      const user = await target(request, request.params.id);
      await sessions.revokeOne(user.id, request.params.session_id);
      return ok(undefined, revoked(request));
    },
  );

  app.delete<{ Params: { id: number } }>(
    '/user/:id/sessions',
    { preHandler: guards.admin, schema: { params: userIdParams } },
    async (request) => {
      const user = await target(request, request.params.id);
      await sessions.revokeAll(user.id);
      return ok(undefined, say(request, { zh: '已退出该用户的所有会话', en: 'Every session of the user signed out' }));
    },
  );
}
