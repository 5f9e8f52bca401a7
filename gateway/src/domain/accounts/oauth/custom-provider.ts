import type { CustomOAuthProviderRow } from '../../../store/database.ts';
import { assertProviderReady } from './errors.ts';
import { accessTokenFrom, badResponse, callProvider, optionalText, profileFrom } from './http.ts';
import type { IdentityProvider } from './types.ts';

/** How the client proves itself at the token endpoint (new-api's auth_style values). */
export const AUTH_STYLE = { auto: 0, inForm: 1, basic: 2 } as const;

/** A custom provider as the sign-in flow needs it: its row with the client secret decrypted. */
export type CustomProviderConfig = CustomOAuthProviderRow;

/**
 * A provider the administrator configured: code → token at its token endpoint (credentials in the form,
 * or in HTTP Basic when auth_style says so), then its user-info endpoint with the access token. The
 * account id and profile are read from the answer at the configured (dotted) field paths.
 */
export function customProvider(
  config: CustomProviderConfig,
  deps: { serverAddress: () => string; timeoutMs: number },
): IdentityProvider {
  const label = config.name;
  return {
    label,
    home: { kind: 'binding', providerId: config.id },
    usernamePrefix: `${config.slug.slice(0, 7)}_`,
    ensureEnabled() {
      assertProviderReady(label, config.enabled, [config.client_id, config.token_endpoint, config.user_info_endpoint]);
    },
    async exchange(code) {
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        // The console sends users back to /oauth/{slug} on the site's own address.
        redirect_uri: `${deps.serverAddress().replace(/\/+$/, '')}/oauth/${config.slug}`,
      });
      const headers: Record<string, string> = {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      };
      if (config.auth_style === AUTH_STYLE.basic) {
        // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
        const pair = `${encodeURIComponent(config.client_id)}:${encodeURIComponent(config.client_secret)}`;
        headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
      } else {
        form.set('client_id', config.client_id);
        form.set('client_secret', config.client_secret);
      }
      const tokenAnswer = await callProvider(
        label,
        config.token_endpoint,
        { method: 'POST', headers, body: form.toString() },
        deps.timeoutMs,
      );
      const token = accessTokenFrom(label, tokenAnswer);
      const info = profileFrom(
        label,
        await callProvider(
          label,
          config.user_info_endpoint,
          { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
          deps.timeoutMs,
        ),
      );
      const id = idText(readPath(info, config.user_id_field));
      if (!id) throw badResponse(label, `user info without ${config.user_id_field}`);
      return {
        providerUserId: id,
        username: optionalText(readPath(info, config.username_field)),
        displayName: optionalText(readPath(info, config.display_name_field)),
        email: optionalText(readPath(info, config.email_field)),
      };
    },
  };
}

/** The value at a dotted path (`data.user.id`) of a JSON object; undefined when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  if (!path) return undefined;
  let current = value;
  for (const step of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, step)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/** Account ids come as text or as integers (many providers answer numeric ids). */
function idText(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return optionalText(value);
}
