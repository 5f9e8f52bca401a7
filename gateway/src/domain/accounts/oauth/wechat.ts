import { AppError } from '../../../errors.ts';
import type { OptionsService } from '../../options/index.ts';
import { assertProviderReady, OAUTH_ERRORS } from './errors.ts';
import { asObject, badResponse, callProvider, optionalText } from './http.ts';
import type { IdentityProvider } from './types.ts';

const label = 'WeChat';

/**
 * A WeChat login server (the wechat-server protocol new-api speaks): the user sends a code to the
 * official account, and `GET {WeChatServerAddress}/api/wechat/user?code=` with the server token answers
 * `{success, message, data: openid}`. The account id is the openid.
 */
export function wechatProvider(deps: { options: OptionsService; timeoutMs: number }): IdentityProvider {
  const { options, timeoutMs } = deps;
  return {
    label,
    home: { kind: 'column', column: 'wechat_id' },
    usernamePrefix: 'wechat_',
    ensureEnabled() {
      assertProviderReady(label, options.getBoolean('WeChatAuthEnabled'), [options.get('WeChatServerAddress')]);
    },
    async exchange(code) {
      const address = options.get('WeChatServerAddress').replace(/\/+$/, '');
      const answer = await callProvider(
        label,
        `${address}/api/wechat/user?code=${encodeURIComponent(code)}`,
        { headers: { authorization: options.get('WeChatServerToken'), accept: 'application/json' } },
        timeoutMs,
      );
      if (answer.status === 401 || answer.status === 403) {
        throw new AppError(OAUTH_ERRORS.OAUTH_CLIENT_REJECTED, { provider: label, reason: `HTTP ${answer.status}` });
      }
      const body = asObject(answer.json);
      if (!body || typeof body.success !== 'boolean') throw badResponse(label, `HTTP ${answer.status}, no envelope`);
      const openid = optionalText(body.data);
      // The server answers success=false (or no openid) for wrong and expired codes.
      if (!body.success || !openid) throw new AppError(OAUTH_ERRORS.WECHAT_CODE_INVALID);
      return { providerUserId: openid, displayName: 'WeChat User' };
    },
  };
}
