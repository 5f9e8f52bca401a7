import type { OptionsService } from '../../options/index.ts';
import { assertProviderReady } from './errors.ts';
import { accessTokenFrom, callProvider, numericId, optionalText, profileFrom } from './http.ts';
import type { IdentityProvider } from './types.ts';

const label = 'GitHub';

/**
 * GitHub's web application flow: code → access token at {oauthUrl}/login/oauth/access_token, then
 * {apiUrl}/user. The account id is GitHub's numeric id, which survives renames (the login does not).
 */
export function githubProvider(deps: {
  options: OptionsService;
  oauthUrl: string;
  apiUrl: string;
  timeoutMs: number;
}): IdentityProvider {
  const { options, timeoutMs } = deps;
  return {
    label,
    home: { kind: 'column', column: 'github_id' },
    usernamePrefix: 'github_',
    ensureEnabled() {
      assertProviderReady(label, options.getBoolean('GitHubOAuthEnabled'), [
        options.get('GitHubClientId'),
        options.get('GitHubClientSecret'),
      ]);
    },
    async exchange(code) {
      const tokenAnswer = await callProvider(
        label,
        `${deps.oauthUrl}/login/oauth/access_token`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            client_id: options.get('GitHubClientId'),
            client_secret: options.get('GitHubClientSecret'),
            code,
          }),
        },
        timeoutMs,
      );
      const token = accessTokenFrom(label, tokenAnswer);
      const user = profileFrom(
        label,
        await callProvider(
          label,
          `${deps.apiUrl}/user`,
          {
            headers: {
              authorization: `Bearer ${token}`,
              accept: 'application/vnd.github+json',
              'user-agent': 'Tollgate',
            },
          },
          timeoutMs,
        ),
      );
      return {
        providerUserId: numericId(label, user.id),
        username: optionalText(user.login),
        displayName: optionalText(user.name),
        email: optionalText(user.email),
      };
    },
  };
}
