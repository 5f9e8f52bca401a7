import type { Kysely } from 'kysely';
import type { KeyValueStore, Locks } from '../../../cluster/index.ts';
import type { OAuthEndpoints } from '../../../config.ts';
import { AppError } from '../../../errors.ts';
import type { Database, UserRow } from '../../../store/database.ts';
import { findLiveUserBy } from '../../../store/repositories/users.ts';
import type { OptionsService } from '../../options/index.ts';
import { ACCOUNT_ERRORS } from '../errors.ts';
import type { Client, LoginService } from '../login.ts';
import type { NewAccount, RegistrationService } from '../registration.ts';
import { checkDisplayName } from '../rules.ts';
import { customProvider } from './custom-provider.ts';
import type { CustomProviderService } from './custom-providers.ts';
import { discordProvider } from './discord.ts';
import { OAUTH_ERRORS } from './errors.ts';
import { githubProvider } from './github.ts';
import { badResponse } from './http.ts';
import {
  attachIdentity,
  findLiveHolder,
  heldByDeregistered,
  identityKey,
  pickUsername,
  randomUsername,
} from './identities.ts';
import { linuxdoProvider } from './linuxdo.ts';
import { oidcProvider } from './oidc.ts';
import { OAuthStates } from './state.ts';
import { type TelegramWidgetFields, telegramProvider } from './telegram.ts';
import type { IdentityProvider, ProviderProfile } from './types.ts';
import { wechatProvider } from './wechat.ts';

/** Built-in providers whose callback carries `code` and `state` (GET /api/oauth/{name}); custom ones use their slug. */
export const CODE_PROVIDERS = ['github', 'oidc', 'linuxdo', 'discord'] as const;
export type CodeProvider = (typeof CODE_PROVIDERS)[number];

export type OAuthOutcome = { kind: 'bind'; user: UserRow } | { kind: 'login'; user: UserRow; sessionId: string };

export interface OAuthServiceDeps {
  db: Kysely<Database>;
  options: OptionsService;
  cluster: { kv: KeyValueStore; locks: Locks };
  registration: RegistrationService;
  login: LoginService;
  endpoints: OAuthEndpoints;
  customProviders: CustomProviderService;
}

/** Provider ids longer than this are not ids; refusing them keeps lock names and columns sane. */
const MAX_PROVIDER_ID_LENGTH = 255;
const IDENTITY_LOCK_TTL_MS = 30_000;
const LOCK_WAIT_STEP_MS = 100;
const LOCK_WAIT_STEPS = 30;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;

/**
 * Third-party sign-in (spec doc 1 §2, §4, §7): one flow for every provider. A signed-in caller binds
 * the provider account to their user; anyone else signs in with it, and an unknown account becomes a
 * new user with the usual sign-up grants when registration is open.
 */
export class OAuthService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #locks: Locks;
  readonly #registration: RegistrationService;
  readonly #login: LoginService;
  readonly #states: OAuthStates;
  readonly #codeProviders: Record<CodeProvider, IdentityProvider>;
  readonly #wechat: IdentityProvider;
  readonly #telegram: IdentityProvider<TelegramWidgetFields>;
  readonly #customProviders: CustomProviderService;
  readonly #timeoutMs: number;

  constructor(deps: OAuthServiceDeps) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#locks = deps.cluster.locks;
    this.#registration = deps.registration;
    this.#login = deps.login;
    this.#states = new OAuthStates(deps.cluster.kv);
    this.#customProviders = deps.customProviders;
    this.#timeoutMs = deps.endpoints.timeoutMs;
    const { options, endpoints } = deps;
    const timeoutMs = endpoints.timeoutMs;
    this.#codeProviders = {
      github: githubProvider({
        options,
        oauthUrl: endpoints.githubOAuthUrl,
        apiUrl: endpoints.githubApiUrl,
        timeoutMs,
      }),
      oidc: oidcProvider({ options, timeoutMs }),
      linuxdo: linuxdoProvider({ options, baseUrl: endpoints.linuxdoUrl, timeoutMs }),
      discord: discordProvider({ options, apiUrl: endpoints.discordApiUrl, timeoutMs }),
    };
    this.#wechat = wechatProvider({ options, timeoutMs });
    this.#telegram = telegramProvider({ options });
  }

  /** GET /api/oauth/state: a one-time state remembering the invitation code. */
  issueState(aff: string | undefined): Promise<string> {
    return this.#states.issue(aff);
  }

  /**
   * The code-and-state callback of a built-in provider or a custom provider's slug: binds when `binder`
   * is the signed-in caller, else signs in.
   */
  async callback(
    name: string,
    input: { code?: string | undefined; state?: string | undefined; browserState?: string | undefined },
    caller: { binder?: UserRow | undefined; client: Client },
  ): Promise<OAuthOutcome> {
    const provider = await this.#codeProvider(name);
    provider.ensureEnabled();
    const code = requireCode(input.code);
    const { aff } = await this.#states.consume(input.state, input.browserState);
    const profile = await provider.exchange(code);
    return caller.binder
      ? this.#bind(provider, profile, caller.binder)
      : this.#signIn(provider, profile, aff, caller.client);
  }

  async #codeProvider(name: string): Promise<IdentityProvider> {
    if ((CODE_PROVIDERS as readonly string[]).includes(name)) return this.#codeProviders[name as CodeProvider];
    const config = await this.#customProviders.configBySlug(name);
    if (!config) throw new AppError(OAUTH_ERRORS.OAUTH_PROVIDER_UNKNOWN, { provider: name.slice(0, 64) });
    return customProvider(config, {
      serverAddress: () => this.#options.get('ServerAddress'),
      timeoutMs: this.#timeoutMs,
    });
  }

  async wechatLogin(code: string | undefined, client: Client): Promise<OAuthOutcome> {
    this.#wechat.ensureEnabled();
    return this.#signIn(this.#wechat, await this.#wechat.exchange(requireCode(code)), '', client);
  }

  async wechatBind(code: string | undefined, user: UserRow): Promise<OAuthOutcome> {
    this.#wechat.ensureEnabled();
    return this.#bind(this.#wechat, await this.#wechat.exchange(requireCode(code)), user);
  }

  async telegramLogin(fields: TelegramWidgetFields, client: Client): Promise<OAuthOutcome> {
    this.#telegram.ensureEnabled();
    return this.#signIn(this.#telegram, await this.#telegram.exchange(fields), '', client);
  }

  async telegramBind(fields: TelegramWidgetFields, user: UserRow): Promise<OAuthOutcome> {
    this.#telegram.ensureEnabled();
    return this.#bind(this.#telegram, await this.#telegram.exchange(fields), user);
  }

  async #bind(provider: IdentityProvider<never>, profile: ProviderProfile, user: UserRow): Promise<OAuthOutcome> {
    const id = checkedId(provider, profile);
    return this.#exclusive(provider, id, async () => {
      const holder = await findLiveHolder(this.#db, provider.home, id);
      if (holder && holder.id !== user.id) {
        throw new AppError(OAUTH_ERRORS.OAUTH_ALREADY_BOUND, { provider: provider.label });
      }
      await attachIdentity(this.#db, user.id, provider.home, id);
      return { kind: 'bind', user };
    });
  }

  async #signIn(
    provider: IdentityProvider<never>,
    profile: ProviderProfile,
    aff: string,
    client: Client,
  ): Promise<OAuthOutcome> {
    const id = checkedId(provider, profile);
    return this.#exclusive(provider, id, async () => {
      let user = await findLiveHolder(this.#db, provider.home, id);
      if (!user) {
        // A deregistered account keeps its provider id, so deleting it does not earn the sign-up grants again.
        if (await heldByDeregistered(this.#db, provider.home, id)) {
          throw new AppError(OAUTH_ERRORS.OAUTH_ACCOUNT_DEREGISTERED, { provider: provider.label });
        }
        if (!this.#options.getBoolean('RegisterEnabled')) throw new AppError(ACCOUNT_ERRORS.REGISTER_DISABLED);
        user = await this.#createAccount(provider, profile, id, aff);
      }
      // Refuses banned users.
      const session = await this.#login.startSession(user, client);
      return { kind: 'login', user: session.user, sessionId: session.sessionId };
    });
  }

  async #createAccount(
    provider: IdentityProvider<never>,
    profile: ProviderProfile,
    id: string,
    aff: string,
  ): Promise<UserRow> {
    let username = await pickUsername(this.#db, profile.username, provider.usernamePrefix);
    // Keep the provider's address only if it is no other account's: email sign-in and resets must stay unambiguous.
    const email =
      profile.email && EMAIL.test(profile.email) && !(await findLiveUserBy(this.#db, 'email', profile.email))
        ? profile.email
        : '';
    // No password: the account signs in through the provider until its owner sets one (bindings.ts hasPassword).
    const passwordHash = '';
    let affCode: string | undefined = aff || undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#registration.createAccount({
          username,
          passwordHash,
          displayName: checkDisplayName(profile.displayName ?? profile.username ?? '', `${provider.label} User`),
          email,
          affCode,
          ...newIdentity(provider, id),
        });
      } catch (error) {
        if (!(error instanceof AppError) || attempt >= 3) throw error;
        // As in new-api, a stale invitation code does not stop a third-party sign-up; it is dropped.
        if (error.spec === ACCOUNT_ERRORS.INVITE_CODE_INVALID) affCode = undefined;
        // Another sign-up took the name between the check and the insert.
        else if (error.spec === ACCOUNT_ERRORS.USERNAME_TAKEN) username = randomUsername(provider.usernamePrefix);
        else throw error;
      }
    }
  }

  /** One sign-in or binding per provider account at a time, across pods: no duplicate accounts from a double click. */
  async #exclusive<T>(provider: IdentityProvider<never>, id: string, run: () => Promise<T>): Promise<T> {
    const name = `oauth:identity:${identityKey(provider.home, id)}`;
    for (let step = 0; step < LOCK_WAIT_STEPS; step++) {
      const lease = await this.#locks.acquire(name, IDENTITY_LOCK_TTL_MS);
      if (lease) {
        try {
          return await run();
        } finally {
          await lease.release();
        }
      }
      await new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_STEP_MS));
    }
    throw new AppError(OAUTH_ERRORS.OAUTH_BUSY, { provider: provider.label });
  }
}

function requireCode(code: string | undefined): string {
  const trimmed = code?.trim();
  if (!trimmed) throw new AppError(OAUTH_ERRORS.OAUTH_CODE_MISSING);
  return trimmed;
}

function checkedId(provider: IdentityProvider<never>, profile: ProviderProfile): string {
  const id = profile.providerUserId.trim();
  if (id === '' || id.length > MAX_PROVIDER_ID_LENGTH) throw badResponse(provider.label, 'unusable account id');
  return id;
}

/** How a new account records the provider account: its users column, or a binding row in the same transaction. */
function newIdentity(provider: IdentityProvider<never>, id: string): Pick<NewAccount, 'identity' | 'afterInsert'> {
  const { home } = provider;
  if (home.kind === 'column') return { identity: { [home.column]: id } };
  return { afterInsert: (trx, user) => attachIdentity(trx, user.id, home, id) };
}
