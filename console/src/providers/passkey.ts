import {
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser';
import { api } from './http.ts';
import type { SessionUser } from './session.ts';

/**
 * The browser's side of the passkey ceremonies against new-api's routes: each `begin` answers
 * `data.options.publicKey` (WebAuthn options in JSON), the browser's credential goes back as JSON.
 */
interface Begun<T> {
  options: { publicKey: T };
}

/** Creates a passkey for the signed-in user and registers it. */
export async function registerPasskey(): Promise<void> {
  const begun = await api.post<Begun<PublicKeyCredentialCreationOptionsJSON>>('/api/user/passkey/register/begin');
  const credential = await startRegistration({ optionsJSON: begun.options.publicKey });
  await api.post('/api/user/passkey/register/finish', credential);
}

/** Signs in with whichever passkey the authenticator offers; answers the gateway's envelope (the user). */
export async function signInWithPasskey() {
  const begun = await api.post<Begun<PublicKeyCredentialRequestOptionsJSON>>('/api/user/passkey/login/begin');
  const assertion = await startAuthentication({ optionsJSON: begun.options.publicKey });
  return api.request<SessionUser>('POST', '/api/user/passkey/login/finish', { body: assertion });
}

/** Proves the signed-in user holds their passkey, then opens the step-up window (POST /api/verify). */
export async function verifyWithPasskey(): Promise<void> {
  const begun = await api.post<Begun<PublicKeyCredentialRequestOptionsJSON>>('/api/user/passkey/verify/begin');
  const assertion = await startAuthentication({ optionsJSON: begun.options.publicKey });
  await api.post('/api/user/passkey/verify/finish', assertion);
  await api.post('/api/verify', { method: 'passkey' });
}

export interface PasskeyStatus {
  enabled: boolean;
  last_used_at?: string | null;
}

export const passkeyStatus = () => api.get<PasskeyStatus>('/api/user/passkey');
