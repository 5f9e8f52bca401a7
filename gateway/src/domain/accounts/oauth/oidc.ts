import type { OptionsService } from '../../options/index.ts';
import { assertProviderReady } from './errors.ts';
import {
  accessTokenFrom,
  asObject,
  badResponse,
  callProvider,
  optionalText,
  type ProviderAnswer,
  profileFrom,
} from './http.ts';
import type { IdentityProvider } from './types.ts';

const label = 'OIDC';

/**
 * OpenID Connect authorization-code flow: code → token endpoint, then the userinfo endpoint; the
 * account id is the `sub` claim. Endpoints set explicitly in the `oidc.*` options win; any missing one
 * comes from the `oidc.well_known` discovery document, read at each sign-in so an edit applies at once.
 */
export function oidcProvider(deps: { options: OptionsService; timeoutMs: number }): IdentityProvider {
  const { options, timeoutMs } = deps;

  async function endpoints(): Promise<{ token: string; userinfo: string }> {
    let token = options.get('oidc.token_endpoint');
    let userinfo = options.get('oidc.user_info_endpoint');
    if (!token || !userinfo) {
      const discovery = discoveryDocument(await callProvider(label, options.get('oidc.well_known'), {}, timeoutMs));
      token ||= httpUrl(discovery.token_endpoint, 'token_endpoint');
      userinfo ||= httpUrl(discovery.userinfo_endpoint, 'userinfo_endpoint');
    }
    return { token, userinfo };
  }

  return {
    label,
    home: { kind: 'column', column: 'oidc_id' },
    usernamePrefix: 'oidc_',
    ensureEnabled() {
      const endpointsKnown =
        options.get('oidc.well_known') ||
        (options.get('oidc.token_endpoint') && options.get('oidc.user_info_endpoint'));
      assertProviderReady(label, options.getBoolean('oidc.enabled'), [
        options.get('oidc.client_id'),
        options.get('oidc.client_secret'),
        endpointsKnown,
      ]);
    },
    async exchange(code) {
      const { token: tokenUrl, userinfo: userinfoUrl } = await endpoints();
      const tokenAnswer = await callProvider(
        label,
        tokenUrl,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            client_id: options.get('oidc.client_id'),
            client_secret: options.get('oidc.client_secret'),
            // The console sends users back to /oauth/oidc on the site's own address (new-api does the same).
            redirect_uri: `${options.get('ServerAddress').replace(/\/+$/, '')}/oauth/oidc`,
          }).toString(),
        },
        timeoutMs,
      );
      const accessToken = accessTokenFrom(label, tokenAnswer);
      const claims = profileFrom(
        label,
        await callProvider(
          label,
          userinfoUrl,
          { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } },
          timeoutMs,
        ),
      );
      const subject = optionalText(claims.sub);
      if (!subject) throw badResponse(label, 'userinfo without sub');
      return {
        providerUserId: subject,
        username: optionalText(claims.preferred_username),
        displayName: optionalText(claims.name),
        email: optionalText(claims.email),
      };
    },
  };
}

function discoveryDocument(answer: ProviderAnswer): Record<string, unknown> {
  const document = answer.status < 400 ? asObject(answer.json) : undefined;
  if (!document) throw badResponse(label, `discovery document unusable (HTTP ${answer.status})`);
  return document;
}

function httpUrl(value: unknown, field: string): string {
  if (typeof value === 'string') {
    try {
      const url = new URL(value);
      if (url.protocol === 'https:' || url.protocol === 'http:') return value;
    } catch {
      // fall through
    }
  }
  throw badResponse(label, `discovery document without a usable ${field}`);
}
