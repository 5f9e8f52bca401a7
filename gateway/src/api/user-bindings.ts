import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { UserAdminService } from '../domain/accounts/admin.ts';
import { type BindingInfo, bindingsOf, clearEmail, unbind } from '../domain/accounts/bindings.ts';
import type { Database, UserRow } from '../store/database.ts';
import type { authGuards } from './auth.ts';
import { signedIn } from './auth.ts';
import { ok, say } from './envelope.ts';
import { idParams } from './schemas.ts';

export interface BindingRouteDeps {
  guards: ReturnType<typeof authGuards>;
  db: Kysely<Database>;
  admin: UserAdminService;
}

/**
 * new-api's binding item (provider_id, provider_name, provider_slug, provider_icon, provider_user_id). Its
 * custom providers have numeric ids; the built-in ones are listed here too, their id being their slug.
 */
const view = (binding: BindingInfo) => ({
  provider_id: binding.providerId,
  provider_name: binding.name,
  provider_slug: binding.slug,
  provider_icon: binding.icon,
  provider_user_id: binding.providerUserId,
});
const views = async (db: Kysely<Database>, user: UserRow) => (await bindingsOf(db, user)).map(view);

const providerParam = { type: 'string', minLength: 1, maxLength: 64 } as const;

/**
 * Third-party bindings: the signed-in user lists and removes theirs (/api/user/oauth/bindings), an
 * administrator a lower-level user's (/api/user/:id/oauth/bindings, and new-api's /api/user/:id/bindings/:type).
 * Removing the last way to sign in (no password, no other binding) is refused.
 */
export function bindingRoutes(app: FastifyInstance, deps: BindingRouteDeps): void {
  const { guards, db } = deps;
  const target = (request: FastifyRequest, id: number) => deps.admin.get(signedIn(request).user, id);
  const unbound = (request: FastifyRequest) => say(request, { zh: '解绑成功', en: 'Unbound' });
  const remove = async (request: FastifyRequest, user: UserRow, provider: string) => {
    await unbind(db, user, provider);
    return ok(undefined, unbound(request));
  };

  app.get('/user/oauth/bindings', { preHandler: guards.user }, async (request) =>
    ok(await views(db, signedIn(request).user)),
  );

  app.delete<{ Params: { provider_id: string } }>(
    '/user/oauth/bindings/:provider_id',
    {
      preHandler: guards.user,
      schema: { params: { type: 'object', required: ['provider_id'], properties: { provider_id: providerParam } } },
    },
    async (request) => remove(request, signedIn(request).user, request.params.provider_id),
  );

  const userIdParams = idParams('User id');
  app.get<{ Params: { id: number } }>(
    '/user/:id/oauth/bindings',
    { preHandler: guards.admin, schema: { params: userIdParams } },
    async (request) => ok(await views(db, await target(request, request.params.id))),
  );

  // new-api's two admin paths (a custom provider's id, a built-in binding type); both take either here,
  // and the binding-type one also clears the email, as new-api's does.
  for (const path of ['/user/:id/oauth/bindings/:provider', '/user/:id/bindings/:provider']) {
    const emailToo = path === '/user/:id/bindings/:provider';
    app.delete<{ Params: { id: number; provider: string } }>(
      path,
      {
        preHandler: guards.admin,
        schema: {
          params: {
            type: 'object',
            required: ['id', 'provider'],
            properties: { id: userIdParams.properties.id, provider: providerParam },
          },
        },
      },
      async (request) => {
        const user = await target(request, request.params.id);
        if (!emailToo || request.params.provider.trim().toLowerCase() !== 'email') {
          return remove(request, user, request.params.provider);
        }
        await clearEmail(db, user);
        return ok(undefined, unbound(request));
      },
    );
  }
}
