import type { UserRow } from '../../../store/database.ts';

/** The user column that holds each built-in provider's account id (spec doc 1 §3). */
export type IdentityColumn = keyof Pick<
  UserRow,
  'github_id' | 'oidc_id' | 'wechat_id' | 'telegram_id' | 'linux_do_id' | 'discord_id'
>;

/**
 * Where a provider's account ids are kept: a users column for the built-in providers, a row of
 * user_oauth_bindings for a provider the administrator configured.
 */
export type IdentityHome = { kind: 'column'; column: IdentityColumn } | { kind: 'binding'; providerId: number };

/** Who the provider says the user is. Only `providerUserId` is trusted to identify the account. */
export interface ProviderProfile {
  providerUserId: string;
  /** The provider's login name: the first choice for a new account's username. */
  username?: string | undefined;
  displayName?: string | undefined;
  email?: string | undefined;
}

/**
 * One third-party identity provider. Every provider module has this shape; `Input` is what the browser
 * brings back (an authorization code, or Telegram's signed widget fields).
 */
export interface IdentityProvider<Input = string> {
  /** Display name in messages. */
  readonly label: string;
  readonly home: IdentityHome;
  /** Prefix of generated usernames, e.g. github_ → github_17. */
  readonly usernamePrefix: string;
  /** Throws OAUTH_PROVIDER_DISABLED when switched off, OAUTH_NOT_CONFIGURED when credentials are missing. */
  ensureEnabled(): void;
  /** Proves who the user is at the provider; provider failures become OAUTH_* AppErrors. */
  exchange(input: Input): Promise<ProviderProfile>;
}
