import type { IncomingHttpHeaders } from 'node:http';
import { Events, OAuth2Server } from 'oauth2-mock-server';

/** Someone signed in at the identity provider. */
export interface OidcPerson {
  sub: string;
  preferred_username: string;
  name: string;
  email?: string;
  /** More claims, nested ones too (for providers whose ids sit deeper in the answer). */
  [claim: string]: unknown;
}

export interface MockOidc {
  /** The issuer URL (discovery at {issuer}/.well-known/openid-configuration). */
  issuer: string;
  /** Who is signed in at the provider: the next /authorize hands out a code for them. */
  signIn(person: OidcPerson): void;
  /** Every token request, as the provider saw it: how the client authenticated, and what it sent. */
  tokenRequests: Array<{ basic: boolean; body: Record<string, string> }>;
  stop(): Promise<void>;
}

/**
 * oauth2-mock-server as a generic OpenID provider that knows its users: its real /authorize endpoint
 * hands out codes for whoever is signed in, its token endpoint checks the client credentials (in the form
 * or HTTP Basic), the redirect_uri and the code (once), and /userinfo answers the code's person.
 */
export async function startMockOidc(client: { id: string; secret: string; redirectUri: string }): Promise<MockOidc> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const issuer = `http://127.0.0.1:${server.address().port}`;
  server.issuer.url = issuer;

  let current: OidcPerson | undefined;
  const codes = new Map<string, OidcPerson>();
  const tokens = new Map<string, OidcPerson>();
  const tokenRequests: MockOidc['tokenRequests'] = [];

  server.service.on(Events.BeforeAuthorizeRedirect, ({ url }: { url: URL }) => {
    const code = url.searchParams.get('code');
    if (code && current) codes.set(code, current);
  });
  server.service.on(Events.BeforeResponse, (response, req) => {
    const body = req.body as unknown as Record<string, string>;
    const basic = basicCredentials(req.headers);
    tokenRequests.push({ basic: basic !== undefined, body: { ...body } });
    const id = basic?.id ?? body.client_id;
    const secret = basic?.secret ?? body.client_secret;
    if (id !== client.id || secret !== client.secret) {
      response.statusCode = 401;
      response.body = { error: 'invalid_client' };
      return;
    }
    const person = body.redirect_uri === client.redirectUri ? codes.get(body.code ?? '') : undefined;
    codes.delete(body.code ?? '');
    if (!person) {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant' };
      return;
    }
    tokens.set((response.body as Record<string, unknown>).access_token as string, person);
  });
  server.service.on(Events.BeforeUserinfo, (response, req) => {
    const person = tokens.get(req.headers.authorization?.replace(/^Bearer /, '') ?? '');
    if (!person) {
      response.statusCode = 401;
      response.body = { error: 'invalid_token' };
      return;
    }
    response.body = { ...person };
  });

  return {
    issuer,
    signIn(person) {
      current = person;
    },
    tokenRequests,
    stop: () => server.stop(),
  };
}

function basicCredentials(headers: IncomingHttpHeaders): { id: string; secret: string } | undefined {
  const match = /^Basic (.+)$/.exec(headers.authorization ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return {
    id: decodeURIComponent(decoded.slice(0, colon)),
    secret: decodeURIComponent(decoded.slice(colon + 1)),
  };
}
