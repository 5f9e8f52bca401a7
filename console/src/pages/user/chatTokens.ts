import { withStepUp } from '../../layout/StepUpDialog.tsx';
import { api } from '../../providers/http.ts';
import type { SiteStatus } from '../../status/status.ts';
import { type KeyedToken, TOKEN_ENABLED } from './chatLink.ts';

/** The address chat clients should call: the configured server address, else this site. */
export function serverAddress(status: SiteStatus): string {
  return status.server_address || window.location.origin;
}

/** The user's enabled tokens (GET /api/token/?p=0&size=100, spec doc 3 §7 and §9: 100 items), keys masked. */
export async function enabledTokens(): Promise<KeyedToken[]> {
  const page = await api.get<{ items: KeyedToken[] }>('/api/token/', { query: { p: 0, size: 100 } });
  return (page?.items ?? []).filter((token) => token.status === TOKEN_ENABLED && token.key);
}

/** One token's full key (lists answer keys masked), without `sk-`; a two-factor user verifies first. */
export async function revealKey(id: number): Promise<string> {
  const answer = await withStepUp(() => api.post<{ key: string }>(`/api/token/${id}/key`));
  return answer?.key ?? '';
}

/** Several tokens' full keys by id, without `sk-`. */
export async function revealKeys(ids: number[]): Promise<Record<number, string>> {
  const answer = await withStepUp(() => api.post<{ keys: Record<number, string> }>('/api/token/batch/keys', { ids }));
  return answer?.keys ?? {};
}
