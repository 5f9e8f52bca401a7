import { useCallback, useEffect, useState } from 'react';
import { api } from '../../../providers/http.ts';
import { ROLE } from '../../../providers/session.ts';
import type { PeriodUsage } from '../../../resources/periods/periods.ts';
import type { UserRecord } from '../../../user.ts';

/** GET /api/user/self (spec doc 1 §3 "User"): what the personal settings page shows. */
export interface SelfUser extends UserRecord {
  /** JSON text of the notification settings (see NotifySetting). */
  setting: string;
  /** The current daily, weekly and monthly periods that have a limit. */
  period_usage?: PeriodUsage;
}

/** The user setting (spec doc 1 §3 "User setting"); the gateway sends whether a webhook secret is set, never it. */
export const NOTIFY_TYPES = ['email', 'webhook', 'bark', 'gotify'] as const;
export type NotifyType = (typeof NOTIFY_TYPES)[number];

export interface NotifySetting {
  notify_type: NotifyType;
  quota_warning_threshold: number;
  webhook_url: string;
  webhook_secret_set: boolean;
  notification_email: string;
  bark_url: string;
  gotify_url: string;
  /** Whether a Gotify token is saved; the gateway never sends the token back. */
  gotify_token_set: boolean;
  gotify_priority: number;
  accept_unset_model_ratio_model: boolean;
}

/** Spec doc 1 §9: 100000 before the setting is loaded, 500000 when the saved setting has none. */
export const INITIAL_WARNING_THRESHOLD = 100_000;
export const LOADED_WARNING_THRESHOLD = 500_000;
/** Spec doc 1 §9 threshold presets. */
export const THRESHOLD_PRESETS = [100_000, 500_000, 1_000_000, 5_000_000];

export function parseSetting(text: string | undefined): NotifySetting {
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (parsed && typeof parsed === 'object') raw = parsed as Record<string, unknown>;
  } catch {
    // A broken setting shows the defaults.
  }
  return {
    notify_type: NOTIFY_TYPES.find((type) => type === raw.notify_type) ?? 'email',
    quota_warning_threshold:
      typeof raw.quota_warning_threshold === 'number' ? raw.quota_warning_threshold : LOADED_WARNING_THRESHOLD,
    webhook_url: typeof raw.webhook_url === 'string' ? raw.webhook_url : '',
    webhook_secret_set: raw.webhook_secret_set === true,
    notification_email: typeof raw.notification_email === 'string' ? raw.notification_email : '',
    bark_url: typeof raw.bark_url === 'string' ? raw.bark_url : '',
    gotify_url: typeof raw.gotify_url === 'string' ? raw.gotify_url : '',
    gotify_token_set: raw.gotify_token_set === true,
    gotify_priority: typeof raw.gotify_priority === 'number' ? raw.gotify_priority : 5,
    accept_unset_model_ratio_model: raw.accept_unset_model_ratio_model === true,
  };
}

/** The signed-in user's own record, with a reload after changes (transfer, binding, settings). */
export function useSelf(): { user: SelfUser | undefined; error: unknown; reload(): Promise<void> } {
  const [user, setUser] = useState<SelfUser>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(async () => {
    try {
      setUser(await api.get<SelfUser>('/api/user/self'));
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { user, error, reload };
}

/** The role label of spec doc 1 §6 (i18n key). */
export function roleLabel(role: number): string {
  if (role >= ROLE.root) return 'personal.role_root';
  if (role >= ROLE.admin) return 'personal.role_admin';
  return 'personal.role_user';
}
