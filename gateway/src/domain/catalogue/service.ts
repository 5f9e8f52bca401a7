import type { Kysely, Selectable } from 'kysely';
import { AppError, type ErrorSpec } from '../../errors.ts';
import type { Database, ModelsTable, VendorsTable } from '../../store/database.ts';
import { containsPattern } from '../../store/repositories/like.ts';
import { isUniqueViolation } from '../accounts/registration.ts';
import type { PricingService } from '../pricing/service.ts';
import { CATALOGUE_ERRORS as E } from './errors.ts';
import { describing, NAME_RULES, nameMatches } from './name-rule.ts';

/** The largest id a Postgres `integer` column holds. */
const INT4_MAX = 2_147_483_647;

export type ModelRow = Selectable<ModelsTable>;
export type VendorRow = Selectable<VendorsTable>;

/** A model's metadata as the API answers it: new-api's Model, with the channels and groups serving it. */
export interface ModelView extends Omit<ModelRow, 'vendor_id'> {
  /** 0: no vendor. */
  vendor_id: number;
  bound_channels: Array<{ name: string; type: number }>;
  enable_groups: string[];
  /** The served names a rule entry (name_rule ≠ 0) describes. */
  matched_models?: string[];
  matched_count?: number;
}

export interface ModelInput {
  model_name?: string | undefined;
  description?: string | undefined;
  icon?: string | undefined;
  tags?: string | undefined;
  vendor_id?: number | null | undefined;
  endpoints?: string | undefined;
  status?: number | undefined;
  sync_official?: number | undefined;
  name_rule?: number | undefined;
}

export interface VendorInput {
  name?: string | undefined;
  description?: string | undefined;
  icon?: string | undefined;
  status?: number | undefined;
}

export interface ModelSearch {
  keyword?: string | undefined;
  /** A vendor id, or part of a vendor's name. */
  vendor?: string | undefined;
  /** new-api's filters: '1' or '0' (anything else: no filter). */
  status?: string | undefined;
  syncOfficial?: string | undefined;
  offset: number;
  limit: number;
}

/** Served models lacking metadata, a price, or both (GET /api/models/missing). */
export interface MissingReport {
  /** Every served model lacking either, sorted. */
  all: string[];
  metadata: string[];
  price: string[];
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Model and vendor metadata (issue 19 deliverable 5): what the pricing page and the console show beside
 * a model's price. Prices themselves stay in the option maps (PricingService).
 */
export class CatalogueService {
  readonly #db: Kysely<Database>;
  readonly #pricing: PricingService;

  constructor(deps: { db: Kysely<Database>; pricing: PricingService }) {
    this.#db = deps.db;
    this.#pricing = deps.pricing;
  }

  async listModels(
    search: ModelSearch,
  ): Promise<{ items: ModelView[]; total: number; vendorCounts: Record<string, number> }> {
    let query = this.#db.selectFrom('models');
    if (search.keyword) {
      const pattern = containsPattern(search.keyword);
      query = query.where((eb) =>
        eb.or([eb('model_name', 'ilike', pattern), eb('description', 'ilike', pattern), eb('tags', 'ilike', pattern)]),
      );
    }
    if (search.vendor) {
      const vendor = search.vendor;
      // An id past the column's range names no vendor (and must not reach Postgres as an int4 overflow).
      query = /^\d+$/.test(vendor)
        ? query.where('vendor_id', '=', Number(vendor) <= INT4_MAX ? Number(vendor) : -1)
        : query.where('vendor_id', 'in', (eb) =>
            eb.selectFrom('vendors').select('id').where('name', 'ilike', containsPattern(vendor)),
          );
    }
    if (search.status === '0' || search.status === '1') query = query.where('status', '=', Number(search.status));
    if (search.syncOfficial === '0' || search.syncOfficial === '1') {
      query = query.where('sync_official', '=', Number(search.syncOfficial));
    }
    const { total } = await query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
    const rows = await query.selectAll().orderBy('id', 'desc').offset(search.offset).limit(search.limit).execute();
    const counts = await this.#db
      .selectFrom('models')
      .select(['vendor_id', (eb) => eb.fn.countAll<number>().as('count')])
      .groupBy('vendor_id')
      .execute();
    const vendorCounts = Object.fromEntries(counts.map((c) => [String(c.vendor_id ?? 0), Number(c.count)]));
    return { items: await this.#enrich(rows), total: Number(total), vendorCounts };
  }

  async getModel(id: number): Promise<ModelView> {
    const row = await this.#db.selectFrom('models').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new AppError(E.MODEL_NOT_FOUND);
    return (await this.#enrich([row]))[0]!;
  }

  async createModel(input: ModelInput): Promise<ModelView> {
    const name = requiredName(input.model_name, E.MODEL_NAME_REQUIRED);
    await this.#assertModelNameFree(name, 0);
    await this.#assertVendor(input.vendor_id);
    const time = now();
    const row = await unique(
      this.#db
        .insertInto('models')
        .values({ ...modelColumns(input), model_name: name, created_time: time, updated_time: time })
        .returningAll()
        .executeTakeFirstOrThrow(),
      E.MODEL_NAME_TAKEN,
    );
    return (await this.#enrich([row]))[0]!;
  }

  /** Changes the fields present in `input` (all of them but the status when `statusOnly`). */
  async updateModel(id: number | undefined, input: ModelInput, statusOnly = false): Promise<ModelView> {
    if (!id) throw new AppError(E.MODEL_ID_REQUIRED);
    const changes = statusOnly ? { status: input.status } : modelColumns(input);
    if (!statusOnly && input.model_name !== undefined) {
      const name = requiredName(input.model_name, E.MODEL_NAME_REQUIRED);
      await this.#assertModelNameFree(name, id);
      Object.assign(changes, { model_name: name });
    }
    if (!statusOnly) await this.#assertVendor(input.vendor_id);
    const row = await unique(
      this.#db
        .updateTable('models')
        .set({ ...changes, updated_time: now() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
      E.MODEL_NAME_TAKEN,
    );
    if (!row) throw new AppError(E.MODEL_NOT_FOUND);
    return (await this.#enrich([row]))[0]!;
  }

  async deleteModel(id: number): Promise<void> {
    const deleted = await this.#db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
    if (deleted.numDeletedRows === 0n) throw new AppError(E.MODEL_NOT_FOUND);
  }

  async listVendors(search: { keyword?: string | undefined; offset: number; limit: number }) {
    let query = this.#db.selectFrom('vendors');
    if (search.keyword) {
      const pattern = containsPattern(search.keyword);
      query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('description', 'ilike', pattern)]));
    }
    const { total } = await query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
    const items = await query.selectAll().orderBy('id', 'desc').offset(search.offset).limit(search.limit).execute();
    return { items, total: Number(total) };
  }

  async getVendor(id: number): Promise<VendorRow> {
    const row = await this.#db.selectFrom('vendors').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new AppError(E.VENDOR_NOT_FOUND);
    return row;
  }

  async createVendor(input: VendorInput): Promise<VendorRow> {
    const name = requiredName(input.name, E.VENDOR_NAME_REQUIRED);
    await this.#assertVendorNameFree(name, 0);
    const time = now();
    return unique(
      this.#db
        .insertInto('vendors')
        .values({ ...vendorColumns(input), name, created_time: time, updated_time: time })
        .returningAll()
        .executeTakeFirstOrThrow(),
      E.VENDOR_NAME_TAKEN,
    );
  }

  async updateVendor(id: number | undefined, input: VendorInput): Promise<VendorRow> {
    if (!id) throw new AppError(E.VENDOR_ID_REQUIRED);
    const name = requiredName(input.name, E.VENDOR_NAME_REQUIRED);
    await this.#assertVendorNameFree(name, id);
    const row = await unique(
      this.#db
        .updateTable('vendors')
        .set({ ...vendorColumns(input), name, updated_time: now() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
      E.VENDOR_NAME_TAKEN,
    );
    if (!row) throw new AppError(E.VENDOR_NOT_FOUND);
    return row;
  }

  /** Its models stay, without a vendor. */
  async deleteVendor(id: number): Promise<void> {
    const deleted = await this.#db.deleteFrom('vendors').where('id', '=', id).executeTakeFirst();
    if (deleted.numDeletedRows === 0n) throw new AppError(E.VENDOR_NOT_FOUND);
  }

  /** Models some enabled channel serves that no entry describes, or that nothing prices. */
  async missing(): Promise<MissingReport> {
    const served = await this.#pricing.catalogue();
    const entries = await this.#db.selectFrom('models').select(['model_name', 'name_rule']).execute();
    const metadata = served.filter((item) => !describing(entries, item.model_name)).map((item) => item.model_name);
    const price = served.filter((item) => !item.configured).map((item) => item.model_name);
    const all = [...new Set([...metadata, ...price])].sort();
    return { all, metadata: metadata.sort(), price: price.sort() };
  }

  /** The entry describing each name (exact first, then the most specific rule), with the vendors used. */
  async describe(names: readonly string[]): Promise<{ models: Map<string, ModelRow>; vendors: VendorRow[] }> {
    const entries = await this.#db.selectFrom('models').selectAll().where('status', '=', 1).execute();
    const models = new Map<string, ModelRow>();
    for (const name of names) {
      const entry = describing(entries, name);
      if (entry) models.set(name, entry);
    }
    const ids = [...new Set([...models.values()].map((m) => m.vendor_id).filter((id): id is number => id !== null))];
    const vendors =
      ids.length === 0
        ? []
        : await this.#db.selectFrom('vendors').selectAll().where('id', 'in', ids).where('status', '=', 1).execute();
    return { models, vendors };
  }

  async #enrich(rows: ModelRow[]): Promise<ModelView[]> {
    if (rows.length === 0) return [];
    const served = await this.#db
      .selectFrom('abilities')
      .innerJoin('channels', 'channels.id', 'abilities.channel_id')
      .select(['abilities.model', 'abilities.group', 'channels.name', 'channels.type'])
      .where('abilities.enabled', '=', true)
      .distinct()
      .execute();
    return rows.map((row) => {
      const matching = served.filter((s) => nameMatches(row.name_rule, row.model_name, s.model));
      const channels = new Map(matching.map((s) => [`${s.name}\u0000${s.type}`, { name: s.name, type: s.type }]));
      const view: ModelView = {
        ...row,
        vendor_id: row.vendor_id ?? 0,
        bound_channels: [...channels.values()],
        enable_groups: [...new Set(matching.map((s) => s.group))].sort(),
      };
      if (row.name_rule !== NAME_RULES.exact) {
        view.matched_models = [...new Set(matching.map((s) => s.model))].sort();
        view.matched_count = view.matched_models.length;
      }
      return view;
    });
  }

  async #assertModelNameFree(name: string, id: number): Promise<void> {
    const taken = await this.#db
      .selectFrom('models')
      .select('id')
      .where('model_name', '=', name)
      .where('id', '<>', id)
      .executeTakeFirst();
    if (taken) throw new AppError(E.MODEL_NAME_TAKEN);
  }

  async #assertVendorNameFree(name: string, id: number): Promise<void> {
    const taken = await this.#db
      .selectFrom('vendors')
      .select('id')
      .where('name', '=', name)
      .where('id', '<>', id)
      .executeTakeFirst();
    if (taken) throw new AppError(E.VENDOR_NAME_TAKEN);
  }

  async #assertVendor(id: number | null | undefined): Promise<void> {
    if (!id) return;
    const found = await this.#db.selectFrom('vendors').select('id').where('id', '=', id).executeTakeFirst();
    if (!found) throw new AppError(E.MODEL_VENDOR_UNKNOWN, { id });
  }
}

/** A write that can lose a race for a unique name (checked first, taken meanwhile) refuses like the check. */
export async function unique<T>(write: Promise<T>, taken: ErrorSpec): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError(taken);
    throw error;
  }
}

function requiredName(value: string | undefined, error: typeof E.MODEL_NAME_REQUIRED): string {
  const name = value?.trim() ?? '';
  if (name === '') throw new AppError(error);
  return name;
}

/** The columns `input` sets; endpoints must be '' or the text of a JSON array or object. */
function modelColumns(input: ModelInput) {
  if (input.endpoints !== undefined && input.endpoints.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.endpoints);
    } catch {
      throw new AppError(E.MODEL_ENDPOINTS_INVALID);
    }
    if (typeof parsed !== 'object' || parsed === null) throw new AppError(E.MODEL_ENDPOINTS_INVALID);
  }
  return defined({
    description: input.description,
    icon: input.icon,
    tags: input.tags,
    // 0 is new-api's "no vendor".
    vendor_id: input.vendor_id === undefined ? undefined : input.vendor_id || null,
    endpoints: input.endpoints?.trim(),
    status: input.status,
    sync_official: input.sync_official,
    name_rule: input.name_rule,
  });
}

function vendorColumns(input: VendorInput) {
  return defined({ description: input.description, icon: input.icon, status: input.status });
}

function defined<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
