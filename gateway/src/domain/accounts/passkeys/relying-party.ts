import { AppError } from '../../../errors.ts';
import type { OptionsService } from '../../options/index.ts';
import { PASSKEY_ERRORS } from './errors.ts';

/** Where a request came from, as the gateway sees it (TRUST_PROXY decides whether forwarded headers count). */
export interface RequestOrigin {
  protocol: string;
  /** Host with port, as the client addressed us. */
  host: string;
}

export type UserVerification = 'required' | 'preferred' | 'discouraged';
export type Attachment = 'platform' | 'cross-platform';

/** The relying party a ceremony runs for: who we are to the authenticator and which origins may ask. */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
  userVerification: UserVerification;
  attachment: Attachment | undefined;
}

/** Browsers treat these as secure contexts over plain http too. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The relying party from the passkey.* options. Empty origins mean the request's own origin; an empty
 * RP id means the first origin's host. Plain http is refused unless allowed, loopback hosts excepted.
 */
export function relyingParty(options: OptionsService, request: RequestOrigin): RelyingParty {
  const allowInsecure = options.getBoolean('passkey.allow_insecure_origin');
  const configured = options
    .get('passkey.origins')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  const origins = configured.length > 0 ? configured : [`${request.protocol}://${request.host}`];
  for (const origin of origins) {
    const url = new URL(origin);
    if (url.protocol === 'http:' && !allowInsecure && !LOOPBACK.has(url.hostname)) {
      throw new AppError(PASSKEY_ERRORS.passkey_https_required, { origin });
    }
  }
  const attachment = options.get('passkey.attachment_preference');
  return {
    id: options.get('passkey.rp_id') || new URL(origins[0] as string).hostname,
    name: options.get('passkey.rp_display_name') || options.get('SystemName') || 'Tollgate',
    origins,
    userVerification: options.get('passkey.user_verification') as UserVerification,
    attachment: attachment === '' ? undefined : (attachment as Attachment),
  };
}
