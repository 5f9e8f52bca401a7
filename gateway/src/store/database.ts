import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * The store's schema as Kysely sees it. Times named `*_time` / `created_at` are Unix seconds
 * (new-api's convention, kept for API compatibility) unless the name says `_ms`.
 * Quota is integer quota (500,000 = 1 USD); bigint columns are parsed to numbers by the dialects.
 */
export interface Database {
  setups: SetupsTable;
  users: UsersTable;
  sessions: SessionsTable;
  tokens: TokensTable;
  channels: ChannelsTable;
  abilities: AbilitiesTable;
  options: OptionsTable;
  model_prices: ModelPricesTable;
  groups: GroupsTable;
  redemptions: RedemptionsTable;
  logs: LogsTable;
  quota_data: QuotaDataTable;
  midjourneys: MidjourneysTable;
  tasks: TasksTable;
  top_ups: TopUpsTable;
  quota_leases: QuotaLeasesTable;
  instance_secrets: InstanceSecretsTable;
  channel_observations: ChannelObservationsTable;
  period_usage: PeriodUsageTable;
  prefill_groups: PrefillGroupsTable;
  checkins: CheckinsTable;
  vendors: VendorsTable;
  models: ModelsTable;
  two_factor: TwoFactorTable;
  two_factor_backup_codes: TwoFactorBackupCodesTable;
  two_factor_challenges: TwoFactorChallengesTable;
  passkey_credentials: PasskeyCredentialsTable;
  custom_oauth_providers: CustomOAuthProvidersTable;
  user_oauth_bindings: UserOAuthBindingsTable;
}

/** A column the database fills on insert and that is never written afterwards. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** Who owns a record that was declared as a Kubernetes custom resource (DESIGN.md §4). */
interface Managed {
  managed_by: Defaulted<string | null>;
  managed_namespace: Defaulted<string | null>;
  managed_name: Defaulted<string | null>;
  managed_uid: Defaulted<string | null>;
}

export interface SetupsTable {
  /** Always 1: the primary key makes a second setup impossible. */
  id: number;
  version: string;
  initialized_at: number;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  /** bcrypt hash; never returned by any API. */
  password: string;
  display_name: Defaulted<string>;
  role: Defaulted<number>;
  status: Defaulted<number>;
  email: Defaulted<string>;
  github_id: Defaulted<string>;
  oidc_id: Defaulted<string>;
  wechat_id: Defaulted<string>;
  telegram_id: Defaulted<string>;
  linux_do_id: Defaulted<string>;
  discord_id: Defaulted<string>;
  /** HMAC of the personal access token (the token itself is shown once). */
  access_token_hmac: Defaulted<string | null>;
  quota: Defaulted<number>;
  used_quota: Defaulted<number>;
  request_count: Defaulted<number>;
  group: Defaulted<string>;
  aff_code: Defaulted<string | null>;
  aff_count: Defaulted<number>;
  aff_quota: Defaulted<number>;
  aff_history_quota: Defaulted<number>;
  inviter_id: Defaulted<number>;
  /** JSON string: notify_type, quota_warning_threshold, webhook_url, ... */
  setting: Defaulted<string>;
  remark: Defaulted<string>;
  /** JSON: model or "*" -> { rpm, tpm } (domain/rate-limits.ts). */
  rate_limits: Defaulted<string>;
  created_at: number;
  last_login_at: Defaulted<number>;
  deleted_at: Defaulted<number | null>;
  /** Daily, weekly and monthly limits as JSON (domain/ledger/periods), '' for none. */
  period_limits: Defaulted<string>;
}

export interface SessionsTable {
  /** SHA-256 of the session id held in the cookie. */
  id_hash: string;
  user_id: number;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  ip: Defaulted<string>;
  user_agent: Defaulted<string>;
  revoked_at: Defaulted<number | null>;
  /** Until when this session passed a step-up verification (two-factor code); 0 when never. */
  verified_until: Defaulted<number>;
}

export interface TokensTable extends Managed {
  id: Generated<number>;
  user_id: number;
  /** HMAC of the key, for lookups; the key itself is stored encrypted. */
  key_hmac: string;
  key_encrypted: string;
  name: string;
  status: Defaulted<number>;
  created_time: number;
  accessed_time: Defaulted<number>;
  /** -1 means never. */
  expired_time: Defaulted<number>;
  remain_quota: Defaulted<number>;
  unlimited_quota: Defaulted<boolean>;
  used_quota: Defaulted<number>;
  model_limits_enabled: Defaulted<boolean>;
  model_limits: Defaulted<string>;
  allow_ips: Defaulted<string>;
  group: Defaulted<string>;
  cross_group_retry: Defaulted<boolean>;
  /** JSON: model or "*" -> { rpm, tpm } (domain/rate-limits.ts). */
  rate_limits: Defaulted<string>;
  deleted_at: Defaulted<number | null>;
  /** Daily, weekly and monthly limits as JSON (domain/ledger/periods), '' for none. */
  period_limits: Defaulted<string>;
}

export interface ChannelsTable extends Managed {
  id: Generated<number>;
  type: number;
  name: string;
  /** Channel key(s), encrypted at rest. */
  key_encrypted: string;
  openai_organization: Defaulted<string | null>;
  test_model: Defaulted<string | null>;
  status: Defaulted<number>;
  weight: Defaulted<number>;
  priority: Defaulted<number>;
  created_time: number;
  test_time: Defaulted<number>;
  response_time: Defaulted<number>;
  base_url: Defaulted<string | null>;
  other: Defaulted<string>;
  balance: Defaulted<number>;
  balance_updated_time: Defaulted<number>;
  models: Defaulted<string>;
  group: Defaulted<string>;
  used_quota: Defaulted<number>;
  model_mapping: Defaulted<string | null>;
  status_code_mapping: Defaulted<string | null>;
  auto_ban: Defaulted<number>;
  /** JSON: status_reason, status_time. */
  other_info: Defaulted<string>;
  tag: Defaulted<string | null>;
  setting: Defaulted<string | null>;
  settings: Defaulted<string | null>;
  param_override: Defaulted<string | null>;
  header_override: Defaulted<string | null>;
  /** JSON: multi-key state (mode, per-key status). */
  channel_info: Defaulted<string>;
  max_input_tokens: Defaulted<number>;
  remark: Defaulted<string>;
}

export interface AbilitiesTable {
  group: string;
  model: string;
  channel_id: number;
  enabled: boolean;
  priority: Defaulted<number>;
  weight: Defaulted<number>;
  tag: Defaulted<string | null>;
}

export interface OptionsTable extends Managed {
  key: string;
  value: string;
  updated_at: number;
}

export interface ModelPricesTable extends Managed {
  model: string;
  /** 0 pay per usage (ratios), 1 pay per call (model_price). */
  quota_type: Defaulted<number>;
  model_ratio: Defaulted<number | null>;
  completion_ratio: Defaulted<number | null>;
  cache_ratio: Defaulted<number | null>;
  cache_creation_ratio: Defaulted<number | null>;
  /** USD per call. */
  model_price: Defaulted<number | null>;
  /** A billing expression (`tiered_expr` mode) that prices the model instead of the ratios. */
  billing_expr: Defaulted<string | null>;
  updated_at: number;
}

export interface GroupsTable extends Managed {
  name: string;
  ratio: Defaulted<number>;
  description: Defaulted<string>;
  /** Whether users may pick this group for their tokens. */
  selectable: Defaulted<boolean>;
  /** JSON map: user group -> ratio when a user of that group uses this group. */
  user_group_ratios: Defaulted<string>;
  /** JSON: model or "*" -> { rpm, tpm } (domain/rate-limits.ts). */
  rate_limits: Defaulted<string>;
  updated_at: number;
}

export interface RedemptionsTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  status: Defaulted<number>;
  name: string;
  quota: Defaulted<number>;
  created_time: number;
  redeemed_time: Defaulted<number>;
  used_user_id: Defaulted<number>;
  /** 0 means never. */
  expired_time: Defaulted<number>;
  deleted_at: Defaulted<number | null>;
}

export interface LogsTable {
  id: Generated<number>;
  user_id: number;
  created_at: number;
  type: number;
  content: Defaulted<string>;
  username: Defaulted<string>;
  token_name: Defaulted<string>;
  model_name: Defaulted<string>;
  quota: Defaulted<number>;
  prompt_tokens: Defaulted<number>;
  completion_tokens: Defaulted<number>;
  use_time: Defaulted<number>;
  is_stream: Defaulted<boolean>;
  channel_id: Defaulted<number>;
  channel_name: Defaulted<string>;
  token_id: Defaulted<number>;
  group: Defaulted<string>;
  ip: Defaulted<string>;
  request_id: Defaulted<string>;
  /** JSON string, see spec doc 3 §3. */
  other: Defaulted<string>;
}

export interface QuotaDataTable {
  id: Generated<number>;
  user_id: number;
  username: Defaulted<string>;
  model_name: string;
  /** Start of the hour, Unix seconds. */
  created_at: number;
  token_used: Defaulted<number>;
  count: Defaulted<number>;
  quota: Defaulted<number>;
}

export interface MidjourneysTable {
  id: Generated<number>;
  code: Defaulted<number>;
  user_id: number;
  action: string;
  mj_id: string;
  prompt: Defaulted<string>;
  prompt_en: Defaulted<string>;
  description: Defaulted<string>;
  state: Defaulted<string>;
  /** Milliseconds. */
  submit_time: number;
  start_time: Defaulted<number>;
  finish_time: Defaulted<number>;
  image_url: Defaulted<string>;
  video_url: Defaulted<string>;
  video_urls: Defaulted<string>;
  status: Defaulted<string>;
  progress: Defaulted<string>;
  fail_reason: Defaulted<string>;
  channel_id: number;
  quota: Defaulted<number>;
  buttons: Defaulted<string>;
  properties: Defaulted<string>;
  /** The token billed (0: none); migration 0004. */
  token_id: Defaulted<number>;
  group: Defaulted<string>;
  /** The name the task was priced as (mj_imagine, …). */
  model_name: Defaulted<string>;
  /** The client's callback URL, kept only when MjNotifyEnabled. */
  notify_hook: Defaulted<string>;
  /** Which of the channel's keys took the task (null: the first, before keys were chosen); migration 0005. */
  key_index: Defaulted<number | null>;
}

export interface TasksTable {
  id: Generated<number>;
  created_at: number;
  updated_at: number;
  task_id: string;
  platform: string;
  user_id: number;
  token_id: Defaulted<number>;
  group: Defaulted<string>;
  channel_id: number;
  quota: Defaulted<number>;
  action: string;
  status: Defaulted<string>;
  fail_reason: Defaulted<string>;
  /** Seconds. */
  submit_time: number;
  start_time: Defaulted<number>;
  finish_time: Defaulted<number>;
  progress: Defaulted<string>;
  properties: Defaulted<string>;
  data: Defaulted<string>;
  /** Billing context kept for settlement and refunds; never shown to users. */
  private_data: Defaulted<string>;
}

export interface TopUpsTable {
  id: Generated<number>;
  user_id: number;
  amount: number;
  money: number;
  trade_no: string;
  payment_method: string;
  /** pending | success | failed | expired */
  status: Defaulted<string>;
  create_time: number;
  complete_time: Defaulted<number>;
}

/** A named list the channel editor can prefill from (new-api's prefill groups). */
export interface PrefillGroupsTable {
  id: Generated<number>;
  name: string;
  /** model | tag | endpoint */
  type: string;
  /** JSON text: an array of strings (model, tag) or the endpoint map's text (endpoint). */
  items: Defaulted<string>;
  description: Defaulted<string>;
  created_time: number;
  updated_time: number;
}

export interface QuotaLeasesTable {
  id: string;
  /** 'user' or 'token'. */
  account_type: string;
  account_id: number;
  /** The pod holding the lease. */
  holder: string;
  /** Quota taken from the account and not yet settled or returned. */
  amount: number;
  created_at: number;
  expires_at: number;
}

export interface InstanceSecretsTable {
  name: string;
  value: string;
  created_at: number;
}

/**
 * Upstream detection: which groups and client types reached a channel through the relay, from real
 * traffic (channel tests are not counted). One row per (channel, group, client type).
 */
export interface ChannelObservationsTable {
  channel_id: number;
  group: string;
  /** A name from relay/client-type.ts, never a raw User-Agent. */
  client_type: string;
  count: number;
  /** Unix seconds of the first and latest request seen. */
  first_seen: number;
  last_seen: number;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type OptionRow = Selectable<OptionsTable>;

/** What a token or user used in one calendar period (domain/ledger/periods): a new period is a new row. */
export interface PeriodUsageTable {
  holder_kind: 'user' | 'token';
  holder_id: number;
  /** The period's start in the configured zone: `d:2026-11-26`, `w:2026-W48`, `m:2026-11`. */
  period: string;
  /** Quota reserved by open requests plus quota charged by finished ones. */
  quota: Defaulted<number>;
  /** Requests admitted and not refunded. */
  requests: Defaulted<number>;
}

/** One daily check-in; (user_id, checkin_date) is the primary key. */
export interface CheckinsTable {
  user_id: number;
  /** The calendar day in quota_setting.period_timezone, `2026-11-27`. */
  checkin_date: string;
  quota_awarded: number;
  created_at: number;
}

/** A model vendor of the catalogue (new-api's `vendors`). */
export interface VendorsTable {
  id: Generated<number>;
  name: string;
  description: Defaulted<string>;
  icon: Defaulted<string>;
  status: Defaulted<number>;
  created_time: number;
  updated_time: number;
}

/** A model's catalogue metadata (new-api's `models`); name_rule 0 exact, 1 prefix, 2 contains, 3 suffix. */
export interface ModelsTable {
  id: Generated<number>;
  model_name: string;
  description: Defaulted<string>;
  icon: Defaulted<string>;
  tags: Defaulted<string>;
  vendor_id: Defaulted<number | null>;
  endpoints: Defaulted<string>;
  status: Defaulted<number>;
  sync_official: Defaulted<number>;
  name_rule: Defaulted<number>;
  created_time: number;
  updated_time: number;
}

/** A user's TOTP factor; `enabled` false while a setup waits for its first code. */
export interface TwoFactorTable {
  user_id: number;
  /** The base32 secret, encrypted by the keyring. */
  secret: string;
  enabled: Defaulted<boolean>;
  /** The last TOTP time step accepted: a code of this step or an earlier one is refused (no replay). */
  last_step: Defaulted<number>;
  failed_attempts: Defaulted<number>;
  /** Unix seconds until which codes are refused after too many wrong ones; 0 when not locked. */
  locked_until: Defaulted<number>;
  /** Step-up verification of callers signed in with an access token (they have no session). */
  token_verified_until: Defaulted<number>;
  created_at: number;
}

export interface TwoFactorBackupCodesTable {
  user_id: number;
  /** HMAC of the normalized code (keyring); the code itself is shown once and never stored. */
  code_hash: string;
  used_at: Defaulted<number | null>;
}

/** A sign-in that passed the password and waits for the second factor: not a session. */
export interface TwoFactorChallengesTable {
  /** SHA-256 of the flow token the client holds. */
  id_hash: string;
  user_id: number;
  expires_at: number;
  attempts: Defaulted<number>;
}

/** A user's passkey (one per user, as new-api keeps it). Ids and keys are base64url text. */
export interface PasskeyCredentialsTable {
  user_id: number;
  credential_id: string;
  /** The COSE public key. */
  public_key: string;
  /** The authenticator's signature counter at the last sign-in: a lower one means a cloned authenticator. */
  sign_count: Defaulted<number>;
  /** JSON list of the transports the authenticator named. */
  transports: Defaulted<string>;
  /** "platform", "cross-platform" or "" when the browser did not say. */
  attachment: Defaulted<string>;
  backup_eligible: Defaulted<boolean>;
  backup_state: Defaulted<boolean>;
  created_at: number;
  last_used_at: Defaulted<number | null>;
}
/** An OAuth 2 / OIDC provider configured by the administrator (new-api's custom_oauth_providers). */
export interface CustomOAuthProvidersTable {
  id: Generated<number>;
  name: string;
  /** The provider's path segment: /oauth/{slug} in the console, /api/oauth/{slug} for the callback. */
  slug: string;
  icon: Defaulted<string>;
  enabled: Defaulted<boolean>;
  client_id: string;
  /** Encrypted by the keyring; never answered. */
  client_secret: Defaulted<string>;
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
  scopes: Defaulted<string>;
  /** Dotted paths into the user-info answer (`sub`, `data.user.id`). */
  user_id_field: Defaulted<string>;
  username_field: Defaulted<string>;
  display_name_field: Defaulted<string>;
  email_field: Defaulted<string>;
  well_known: Defaulted<string>;
  /** How the client authenticates at the token endpoint: 0 auto (in the form), 1 in the form, 2 HTTP Basic. */
  auth_style: Defaulted<number>;
  created_at: number;
  updated_at: number;
}

/** A user's account at a custom provider. */
export interface UserOAuthBindingsTable {
  id: Generated<number>;
  user_id: number;
  provider_id: number;
  provider_user_id: string;
  created_at: number;
}

export type CustomOAuthProviderRow = Selectable<CustomOAuthProvidersTable>;
