import type { FastifyInstance } from 'fastify';
import {
  type CustomProviderInput,
  type CustomProviderService,
  providerView,
} from '../domain/accounts/oauth/custom-providers.ts';
import type { authGuards } from './auth.ts';
import { ok, say } from './envelope.ts';
import { text } from './schemas.ts';

export interface CustomOAuthRouteDeps {
  guards: ReturnType<typeof authGuards>;
  providers: CustomProviderService;
}

/** Postgres `integer` ids: anything larger names no provider. */
const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'Provider id' } },
} as const;

/** new-api's request fields; lengths and formats are checked by the service, with stable codes. */
const providerBody = {
  type: 'object',
  properties: {
    name: text('Display name', 1024),
    slug: text('Path segment: /oauth/{slug}', 1024),
    icon: text('Icon name or URL', 1024),
    enabled: { type: 'boolean' },
    client_id: text('OAuth client id', 1024),
    client_secret: text('OAuth client secret (write-only; empty keeps the stored one)', 1024),
    authorization_endpoint: text('Authorization endpoint', 2048),
    token_endpoint: text('Token endpoint', 2048),
    user_info_endpoint: text('User-info endpoint', 2048),
    scopes: text('Space-separated scopes', 1024),
    user_id_field: text('Dotted path of the account id in the user-info answer', 1024),
    username_field: text('Dotted path of the username', 1024),
    display_name_field: text('Dotted path of the display name', 1024),
    email_field: text('Dotted path of the email', 1024),
    well_known: text('Discovery document URL', 2048),
    auth_style: { type: 'integer', description: '0 auto (form), 1 form, 2 HTTP Basic' },
  },
} as const;

/**
 * /api/custom-oauth-provider: root administers the OAuth 2 / OIDC providers users may sign in with
 * (new-api's paths and shapes). The client secret is write-only.
 */
export function customOAuthRoutes(app: FastifyInstance, deps: CustomOAuthRouteDeps): void {
  const { guards, providers } = deps;
  const root = { preHandler: guards.root };

  app.get('/custom-oauth-provider/', root, async () => ok((await providers.list()).map(providerView)));

  app.post<{ Body: { well_known_url?: string; issuer_url?: string } }>(
    '/custom-oauth-provider/discovery',
    {
      ...root,
      schema: {
        body: {
          type: 'object',
          properties: { well_known_url: text('Discovery URL', 2048), issuer_url: text('Issuer URL', 2048) },
        },
      },
    },
    async (request) => ok(await providers.discover(request.body ?? {})),
  );

  app.get<{ Params: { id: number } }>(
    '/custom-oauth-provider/:id',
    { ...root, schema: { params: idParams } },
    async (request) => ok(providerView(await providers.get(request.params.id))),
  );

  app.post<{ Body: CustomProviderInput }>(
    '/custom-oauth-provider/',
    { ...root, schema: { body: { ...providerBody, required: ['name', 'slug'] } } },
    async (request) =>
      ok(providerView(await providers.create(request.body)), say(request, { zh: '创建成功', en: 'Created' })),
  );

  app.put<{ Params: { id: number }; Body: CustomProviderInput }>(
    '/custom-oauth-provider/:id',
    { ...root, schema: { params: idParams, body: providerBody } },
    async (request) =>
      ok(
        providerView(await providers.update(request.params.id, request.body ?? {})),
        say(request, { zh: '更新成功', en: 'Updated' }),
      ),
  );

  app.delete<{ Params: { id: number } }>(
    '/custom-oauth-provider/:id',
    { ...root, schema: { params: idParams } },
    async (request) => {
      await providers.remove(request.params.id);
      return ok(undefined, say(request, { zh: '删除成功', en: 'Deleted' }));
    },
  );
}
