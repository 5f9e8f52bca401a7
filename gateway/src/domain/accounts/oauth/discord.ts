import type { OptionsService } from '../../options/index.ts';
import { assertProviderReady } from './errors.ts';
import { accessTokenFrom, badResponse, callProvider, optionalText, profileFrom } from './http.ts';
import type { IdentityProvider } from './types.ts';

const label = 'Discord';

/**
 * Discord's authorization-code flow: code → token at {apiUrl}/oauth2/token (form body with the client
 * credentials), then {apiUrl}/users/@me. The account id is Discord's snowflake (a string of digits), which
 * survives username changes.
 */
export function discordProvider(deps: {
  options: OptionsService;
  apiUrl: string;
  timeoutMs: number;
}): IdentityProvider {
  const { options, timeoutMs } = deps;
  return {
    label,
    home: { kind: 'column', column: 'discord_id' },
    usernamePrefix: 'discord_',
    ensureEnabled() {
      assertProviderReady(label, options.getBoolean('discord.enabled'), [
        options.get('discord.client_id'),
        options.get('discord.client_secret'),
      ]);
    },
    async exchange(code) {
      const tokenAnswer = await callProvider(
        label,
        `${deps.apiUrl}/oauth2/token`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            client_id: options.get('discord.client_id'),
            client_secret: options.get('discord.client_secret'),
            // Must equal the redirect_uri of the authorization request the console made.
            redirect_uri: `${options.get('ServerAddress').replace(/\/+$/, '')}/oauth/discord`,
          }).toString(),
        },
        timeoutMs,
      );
      const token = accessTokenFrom(label, tokenAnswer);
      const user = profileFrom(
        label,
        await callProvider(
          label,
          `${deps.apiUrl}/users/@me`,
          { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
          timeoutMs,
        ),
      );
      const id = typeof user.id === 'string' && /^\d{1,32}$/.test(user.id) ? user.id : undefined;
      if (!id) throw badResponse(label, 'user answer without a snowflake id');
      return {
        providerUserId: id,
        username: optionalText(user.username),
        displayName: optionalText(user.global_name) ?? optionalText(user.username),
        email: user.verified === true ? optionalText(user.email) : undefined,
      };
    },
  };
}
