import { AppError } from '../../../errors.ts';
import type { OptionsService } from '../../options/index.ts';
import { assertProviderReady, OAUTH_ERRORS } from './errors.ts';
import { accessTokenFrom, callProvider, numericId, optionalText, profileFrom } from './http.ts';
import type { IdentityProvider } from './types.ts';

const label = 'LinuxDO';

/**
 * LinuxDO Connect: code → token at {baseUrl}/oauth2/token (client credentials in Basic auth, as
 * new-api sends them), then {baseUrl}/api/user. Users below LinuxDOMinimumTrustLevel are refused.
 */
export function linuxdoProvider(deps: {
  options: OptionsService;
  baseUrl: string;
  timeoutMs: number;
}): IdentityProvider {
  const { options, timeoutMs } = deps;
  return {
    label,
    home: { kind: 'column', column: 'linux_do_id' },
    usernamePrefix: 'linuxdo_',
    ensureEnabled() {
      assertProviderReady(label, options.getBoolean('LinuxDOOAuthEnabled'), [
        options.get('LinuxDOClientId'),
        options.get('LinuxDOClientSecret'),
      ]);
    },
    async exchange(code) {
      const credentials = Buffer.from(
        `${options.get('LinuxDOClientId')}:${options.get('LinuxDOClientSecret')}`,
      ).toString('base64');
      const tokenAnswer = await callProvider(
        label,
        `${deps.baseUrl}/oauth2/token`,
        {
          method: 'POST',
          headers: {
            authorization: `Basic ${credentials}`,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: new URLSearchParams({ grant_type: 'authorization_code', code }).toString(),
        },
        timeoutMs,
      );
      const token = accessTokenFrom(label, tokenAnswer);
      const user = profileFrom(
        label,
        await callProvider(
          label,
          `${deps.baseUrl}/api/user`,
          { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
          timeoutMs,
        ),
      );
      const providerUserId = numericId(label, user.id);
      const trustLevel = typeof user.trust_level === 'number' ? user.trust_level : 0;
      const minimum = options.getNumber('LinuxDOMinimumTrustLevel');
      if (trustLevel < minimum) {
        throw new AppError(OAUTH_ERRORS.OAUTH_TRUST_LEVEL_TOO_LOW, { provider: label, minimum, actual: trustLevel });
      }
      return {
        providerUserId,
        username: optionalText(user.username),
        displayName: optionalText(user.name),
      };
    },
  };
}
