import { type Kysely, sql } from 'kysely';
import { AppError } from '../../../errors.ts';
import type { OutboundGuard } from '../../../http/outbound/guard.ts';
import type { CustomOAuthProviderRow, Database } from '../../../store/database.ts';
import type { Keyring } from '../../keyring.ts';
import { AUTH_STYLE, type CustomProviderConfig } from './custom-provider.ts';
import { type DiscoveryRequest, type DiscoveryResult, fetchDiscovery, isHttpUrl } from './discovery.ts';
import { CUSTOM_OAUTH_ERRORS } from './errors.ts';

/** What the administrator sends (new-api's field names); on update every field is optional. */
export interface CustomProviderInput {
  name?: string;
  slug?: string;
  icon?: string;
  enabled?: boolean;
  client_id?: string;
  /** Write-only. Empty or absent on update keeps the stored secret. */
  client_secret?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  user_info_endpoint?: string;
  scopes?: string;
  user_id_field?: string;
  username_field?: string;
  display_name_field?: string;
  email_field?: string;
  well_known?: string;
  auth_style?: number;
}

/**
 * Slugs a custom provider may not take: the built-in providers (their callbacks and binding slugs) and
 * the fixed paths under /api/oauth and /oauth.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'github',
  'oidc',
  'linuxdo',
  'discord',
  'wechat',
  'telegram',
  'state',
  'email',
  'passkey',
  'bind',
  'login',
]);

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const FIELD_PATH = /^[A-Za-z0-9_:-]+(?:\.[A-Za-z0-9_:-]+)*$/;
const now = () => Math.floor(Date.now() / 1000);
/** How late /api/status may show another pod's change to the providers. */
const ENABLED_TTL_MS = 10_000;
/** Under the 10 s an /api answer may take, whatever OAUTH_TIMEOUT_MS allows a sign-in. */
const DISCOVERY_TIMEOUT_MS = 8_000;

type Row = CustomOAuthProviderRow;
/** The columns an administrator sets (the secret apart). */
type Settings = Omit<Row, 'id' | 'client_secret' | 'created_at' | 'updated_at'>;

/** A provider as the API shows it: everything but the client secret. */
export function providerView(row: Row) {
  const { client_secret: _secret, created_at: _created, updated_at: _updated, ...shown } = row;
  return shown;
}

/** What /api/status tells visitors about an enabled provider: enough to build the authorization URL. */
export function publicProviderView(row: Row) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    icon: row.icon,
    client_id: row.client_id,
    authorization_endpoint: row.authorization_endpoint,
    scopes: row.scopes,
  };
}

/**
 * Custom OAuth 2 / OIDC providers (new-api's /api/custom-oauth-provider, root only): CRUD with
 * validation, the client secret encrypted at rest, discovery, and the lookups the sign-in flow needs.
 */
export class CustomProviderService {
  readonly #db: Kysely<Database>;
  readonly #keyring: Keyring;
  readonly #outbound: OutboundGuard;
  readonly #timeoutMs: number;
  #enabled: { rows: Row[]; readAt: number } | undefined;
  #generation = 0;

  constructor(deps: { db: Kysely<Database>; keyring: Keyring; outbound: OutboundGuard; timeoutMs: number }) {
    this.#db = deps.db;
    this.#keyring = deps.keyring;
    this.#outbound = deps.outbound;
    this.#timeoutMs = deps.timeoutMs;
  }

  list(): Promise<Row[]> {
    return this.#db.selectFrom('custom_oauth_providers').selectAll().orderBy('id').execute();
  }

  /**
   * The enabled providers, for /api/status (every console page load asks it): read at most once per
   * ENABLED_TTL_MS, at once after this pod's own changes; with the store down, the last list read.
   */
  async listEnabled(): Promise<Row[]> {
    const cached = this.#enabled;
    if (cached && Date.now() - cached.readAt < ENABLED_TTL_MS) return cached.rows;
    const generation = this.#generation;
    try {
      const rows = await this.#db
        .selectFrom('custom_oauth_providers')
        .selectAll()
        .where('enabled', '=', true)
        .orderBy('id')
        .execute();
      // A change made while this read ran must not be hidden by it.
      if (generation === this.#generation) this.#enabled = { rows, readAt: Date.now() };
      return rows;
    } catch (error) {
      if (cached) return cached.rows;
      throw error;
    }
  }

  /** Drops the cached list after a change on this pod. */
  #changed(): void {
    this.#generation++;
    this.#enabled = undefined;
  }

  async get(id: number): Promise<Row> {
    const row = await this.#db.selectFrom('custom_oauth_providers').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_NOT_FOUND);
    return row;
  }

  /** The provider behind a callback slug, its secret decrypted; undefined when no provider has it. */
  async configBySlug(slug: string): Promise<CustomProviderConfig | undefined> {
    const row = await this.#db
      .selectFrom('custom_oauth_providers')
      .selectAll()
      .where('slug', '=', slug)
      .executeTakeFirst();
    if (!row) return undefined;
    return { ...row, client_secret: row.client_secret ? this.#keyring.decrypt(row.client_secret) : '' };
  }

  async create(input: CustomProviderInput): Promise<Row> {
    const values = checked(input, undefined);
    await this.#ensureSlugFree(values.slug, undefined);
    const secret = input.client_secret?.trim() ?? '';
    const at = now();
    const created = await this.#db
      .insertInto('custom_oauth_providers')
      .values({ ...values, client_secret: secret ? this.#keyring.encrypt(secret) : '', created_at: at, updated_at: at })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch(slugRace);
    this.#changed();
    return created;
  }

  async update(id: number, input: CustomProviderInput): Promise<Row> {
    const current = await this.get(id);
    const values = checked(input, current);
    if (values.slug !== current.slug) await this.#ensureSlugFree(values.slug, id);
    const secret = input.client_secret?.trim() ?? '';
    const updated = await this.#db
      .updateTable('custom_oauth_providers')
      .set({ ...values, ...(secret ? { client_secret: this.#keyring.encrypt(secret) } : {}), updated_at: now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
      .catch(slugRace);
    if (!updated) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_NOT_FOUND);
    this.#changed();
    return updated;
  }

  /**
   * Deletes a provider. As in new-api, a provider live users are bound to is not deleted: for an account
   * created through it, it may be the only way to sign in, and deleting it would lock that user out
   * without a word. The administrator disables it (sign-in stops, bindings stay) or has the bindings
   * removed first. Bindings of deregistered users go with the provider (the foreign key cascades). The
   * count and the delete run in one transaction that locks the provider row, so a sign-up through it
   * cannot slip in between.
   */
  async remove(id: number): Promise<void> {
    await this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('custom_oauth_providers')
        .select('id')
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_NOT_FOUND);
      const { count } = await trx
        .selectFrom('user_oauth_bindings as b')
        .innerJoin('users', 'users.id', 'b.user_id')
        .select(sql<number>`count(*)::int`.as('count'))
        .where('b.provider_id', '=', id)
        .where('users.deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (count > 0) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_IN_USE, { count });
      await trx.deleteFrom('custom_oauth_providers').where('id', '=', id).execute();
    });
    this.#changed();
  }

  discover(request: DiscoveryRequest): Promise<DiscoveryResult> {
    return fetchDiscovery(this.#outbound, request, Math.min(this.#timeoutMs, DISCOVERY_TIMEOUT_MS));
  }

  async #ensureSlugFree(slug: string, exceptId: number | undefined): Promise<void> {
    let query = this.#db.selectFrom('custom_oauth_providers').select('id').where('slug', '=', slug);
    if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
    if (await query.executeTakeFirst()) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_SLUG_TAKEN);
  }
}

/** Two saves racing for one slug: the unique index decides, the loser hears the usual refusal. */
function slugRace(error: unknown): never {
  if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505') {
    throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_SLUG_TAKEN);
  }
  throw error;
}

const invalid = (field: string, rule: string) =>
  new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_FIELD_INVALID, { field, rule });

/** The input merged over the current row (if any), validated; defaults as new-api's. */
function checked(input: CustomProviderInput, current: Row | undefined): Settings {
  const pick = <K extends keyof CustomProviderInput & keyof Row>(key: K, fallback: Row[K]) =>
    input[key] ?? current?.[key] ?? fallback;
  const text = (key: keyof CustomProviderInput & keyof Row, max: number, fallback = '') => {
    const value = String(pick(key, fallback as never)).trim();
    if ([...value].length > max) throw invalid(key, `at most ${max} characters`);
    return value;
  };
  const required = (key: keyof CustomProviderInput & keyof Row, max: number) => {
    const value = text(key, max);
    if (value === '') throw invalid(key, 'required');
    return value;
  };
  const endpoint = (key: keyof CustomProviderInput & keyof Row, optional = false) => {
    const value = optional ? text(key, 512) : required(key, 512);
    if (value !== '' && !isHttpUrl(value)) throw invalid(key, 'an http(s) URL');
    return value;
  };
  const path = (key: keyof CustomProviderInput & keyof Row, fallback: string, optional: boolean) => {
    const value = text(key, 128, fallback);
    if (value === '' && !optional) throw invalid(key, 'required');
    if (value !== '' && !FIELD_PATH.test(value)) throw invalid(key, 'a field name or dotted path');
    return value;
  };

  const slug = required('slug', 64).toLowerCase();
  if (!SLUG.test(slug)) throw invalid('slug', 'lowercase letters, digits and inner hyphens');
  if (RESERVED_SLUGS.has(slug)) throw new AppError(CUSTOM_OAUTH_ERRORS.CUSTOM_OAUTH_SLUG_RESERVED, { slug });
  const authStyle = Number(pick('auth_style', AUTH_STYLE.auto));
  if (!Object.values(AUTH_STYLE).includes(authStyle as 0)) throw invalid('auth_style', '0, 1 or 2');
  return {
    name: required('name', 64),
    slug,
    icon: text('icon', 128),
    enabled: Boolean(pick('enabled', false)),
    client_id: required('client_id', 256),
    authorization_endpoint: endpoint('authorization_endpoint'),
    token_endpoint: endpoint('token_endpoint'),
    user_info_endpoint: endpoint('user_info_endpoint'),
    scopes: text('scopes', 256, 'openid profile email'),
    user_id_field: path('user_id_field', 'sub', false),
    username_field: path('username_field', 'preferred_username', true),
    display_name_field: path('display_name_field', 'name', true),
    email_field: path('email_field', 'email', true),
    well_known: endpoint('well_known', true),
    auth_style: authStyle,
  };
}
