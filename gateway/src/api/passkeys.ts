import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LoginService } from '../domain/accounts/login.ts';
import type { PasskeyService } from '../domain/accounts/passkeys/service.ts';
import type { SessionService } from '../domain/accounts/sessions.ts';
import { sessionUserView } from '../domain/accounts/view.ts';
import type { authGuards } from './auth.ts';
import { setSessionCookie, signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { idParams } from './schemas.ts';

export interface PasskeyRouteDeps {
  guards: ReturnType<typeof authGuards>;
  critical: (request: FastifyRequest) => Promise<void>;
  passkeys: PasskeyService;
  login: LoginService;
  sessions: SessionService;
}

const tags = ['passkeys'];
/** base64url text of a bounded size: authenticator data, signatures and keys are far smaller. */
const b64 = { type: 'string', maxLength: 16384 } as const;

/** The PublicKeyCredential JSON the browser's ceremony produces (WebAuthn's toJSON, as new-api reads it). */
const credentialBody = (response: Record<string, unknown>, required: string[]) =>
  ({
    type: 'object',
    required: ['id', 'rawId', 'type', 'response'],
    properties: {
      id: { type: 'string', minLength: 1, maxLength: 1024 },
      rawId: { type: 'string', maxLength: 1024 },
      type: { type: 'string', const: 'public-key' },
      authenticatorAttachment: { type: ['string', 'null'], maxLength: 32 },
      clientExtensionResults: { type: 'object' },
      response: { type: 'object', required, properties: response },
    },
  }) as const;

const registrationBody = credentialBody(
  {
    clientDataJSON: b64,
    attestationObject: b64,
    transports: { type: ['array', 'null'], maxItems: 16, items: { type: 'string', maxLength: 32 } },
  },
  ['clientDataJSON', 'attestationObject'],
);
const assertionBody = credentialBody(
  {
    clientDataJSON: b64,
    authenticatorData: b64,
    signature: b64,
    userHandle: { type: ['string', 'null'], maxLength: 1024 },
  },
  ['clientDataJSON', 'authenticatorData', 'signature'],
);

/** The origin the browser ran the ceremony on, as far as this request tells (TRUST_PROXY honoured). */
const originOf = (request: FastifyRequest) => ({ protocol: request.protocol, host: request.host });

/** /api/user/passkey* and the administrators' reset, in new-api's paths and shapes. */
export function passkeyRoutes(app: FastifyInstance, deps: PasskeyRouteDeps): void {
  const { guards, critical, passkeys } = deps;

  app.post('/user/passkey/login/begin', { preHandler: critical, schema: { tags } }, async (request) =>
    ok(await passkeys.beginLogin(originOf(request))),
  );

  app.post<{ Body: AuthenticationResponseJSON }>(
    '/user/passkey/login/finish',
    { preHandler: critical, schema: { tags, body: assertionBody } },
    async (request, reply) => {
      const user = await passkeys.finishLogin(request.body, originOf(request));
      // A passkey is a strong factor by itself: no second factor is asked (new-api's setupLogin too).
      const client = { ip: request.ip, userAgent: request.headers['user-agent'] ?? '' };
      const session = await deps.login.startSession(user, client);
      setSessionCookie(request, reply, session.sessionId, deps.sessions.ttlSeconds);
      return ok(sessionUserView(session.user), say(request, { zh: '登录成功', en: 'Login successful' }));
    },
  );

  app.get('/user/passkey', { preHandler: guards.user, schema: { tags } }, async (request) =>
    ok(await passkeys.status(signedIn(request).user.id)),
  );

  app.delete('/user/passkey', { preHandler: [critical, guards.user], schema: { tags } }, async (request) => {
    await passkeys.remove(signedIn(request).user);
    return ok(undefined, say(request, { zh: 'Passkey 已解绑', en: 'Passkey removed' }));
  });

  app.post('/user/passkey/register/begin', { preHandler: [critical, guards.user], schema: { tags } }, async (request) =>
    ok(await passkeys.beginRegistration(signedIn(request).user, originOf(request))),
  );

  app.post<{ Body: RegistrationResponseJSON }>(
    '/user/passkey/register/finish',
    { preHandler: [critical, guards.user], schema: { tags, body: registrationBody } },
    async (request) => {
      await passkeys.finishRegistration(signedIn(request).user, request.body, originOf(request));
      return ok(undefined, say(request, { zh: 'Passkey 注册成功', en: 'Passkey registered' }));
    },
  );

  app.post('/user/passkey/verify/begin', { preHandler: [critical, guards.user], schema: { tags } }, async (request) =>
    ok(await passkeys.beginVerification(signedIn(request), originOf(request))),
  );

  app.post<{ Body: AuthenticationResponseJSON }>(
    '/user/passkey/verify/finish',
    { preHandler: [critical, guards.user], schema: { tags, body: assertionBody } },
    async (request) => {
      await passkeys.finishVerification(signedIn(request), request.body, originOf(request));
      return ok(undefined, say(request, { zh: 'Passkey 验证成功', en: 'Passkey verified' }));
    },
  );

  app.delete<{ Params: { id: number } }>(
    '/user/:id/reset_passkey',
    { preHandler: guards.admin, schema: { tags, params: idParams('User id') } },
    async (request) => {
      await passkeys.reset(signedIn(request).user, request.params.id);
      return ok(undefined, say(request, { zh: 'Passkey 已重置', en: "The user's passkey was reset" }));
    },
  );
}
