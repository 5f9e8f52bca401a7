import { api } from '../../providers/http.ts';
import type { SiteStatus } from '../../status/status.ts';

/** A token as the chat pages need it (spec doc 3 §3 "Token record"). */
export interface KeyedToken {
  id: number;
  name: string;
  key: string;
  status: number;
}

/** Token status 1: enabled (spec doc 2 §4); only enabled tokens supply keys. */
export const TOKEN_ENABLED = 1;

/** The key with exactly one `sk-` in front (the list answers keys with the prefix; templates add it too). */
export function skKey(key: string): string {
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

/** The address chat clients should call: the configured server address, else this site. */
export function serverAddress(status: SiteStatus): string {
  return status.server_address || window.location.origin;
}

/**
 * A chat client URL from a saved link template (spec doc 3 §2 "Chat frame page"): `{address}` becomes the
 * encoded server address and `{key}` the key with its `sk-` prefix.
 */
export function chatUrl(template: string, key: string, address: string): string {
  return template.replaceAll('{address}', encodeURIComponent(address)).replaceAll('{key}', skKey(key));
}

/** The chat-to-link URL (spec doc 3 §2 "Chat-to-link page"): the chat client with key and address in settings. */
export function chatLinkUrl(chatLink: string, key: string, address: string): string {
  const settings = JSON.stringify({ key: skKey(key), url: address });
  return `${chatLink.replace(/\/+$/, '')}/#/?settings=${encodeURIComponent(settings)}`;
}

/** The user's enabled tokens (GET /api/token/?p=0&size=100, spec doc 3 §7 and §9: 100 items). */
export async function enabledTokens(): Promise<KeyedToken[]> {
  const page = await api.get<{ items: KeyedToken[] }>('/api/token/', { query: { p: 0, size: 100 } });
  return (page?.items ?? []).filter((token) => token.status === TOKEN_ENABLED && token.key);
}
