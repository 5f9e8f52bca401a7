import type { Kysely, Transaction } from 'kysely';
import { AppError } from '../../errors.ts';
import type { OutboundGuard } from '../../http/outbound/guard.ts';
import type { Database } from '../../store/database.ts';
import type { OptionsService } from '../options/index.ts';
import type { PricingService } from '../pricing/service.ts';
import { CATALOGUE_ERRORS as E } from './errors.ts';
import { describing } from './name-rule.ts';
import { type ModelRow, unique } from './service.ts';
import { fetchCatalogue, type UpstreamCatalogue, type UpstreamModel, type UpstreamVendor } from './upstream.ts';

/** The option holding the upstream catalogue's URL (Tollgate's; new-api hard-codes its own source). */
export const CATALOGUE_URL_OPTION = 'ModelCatalogueUpstreamURL';

/** The fields an apply may overwrite; `price` writes ModelRatio / CompletionRatio / ModelPrice. */
export const SYNC_FIELDS = [
  'description',
  'icon',
  'tags',
  'vendor',
  'endpoints',
  'name_rule',
  'status',
  'price',
] as const;
export type SyncField = (typeof SYNC_FIELDS)[number];

export interface FieldDifference {
  field: SyncField;
  local: unknown;
  upstream: unknown;
}

export interface SyncPreview {
  /** Served models no entry describes that the upstream catalogue has: an apply creates their entries. */
  missing: string[];
  /** Differences an apply can overwrite, per model (entries kept out of syncs by sync_official 0 are left out). */
  conflicts: Array<{ model_name: string; fields: FieldDifference[] }>;
  source: { url: string };
}

export interface SyncRequest {
  /** The missing models to create; all of them when absent. */
  create?: string[] | undefined;
  overwrite?: Array<{ model_name: string; fields: SyncField[] }> | undefined;
}

export interface SyncResult {
  created_models: number;
  created_vendors: number;
  updated_models: number;
  updated_prices: number;
  skipped_models: string[];
  created_list: string[];
  updated_list: string[];
  priced_list: string[];
  source: { url: string };
}

type Price = { model_ratio: number | null; completion_ratio: number | null; model_price: number | null };
const PRICE_KEYS = {
  model_ratio: 'ModelRatio',
  completion_ratio: 'CompletionRatio',
  model_price: 'ModelPrice',
} as const;

/**
 * Preview and apply of an upstream model catalogue (a JSON URL the administrator sets): metadata for
 * served models that lack it, and the chosen differences in metadata and prices, written in one transaction.
 */
export class CatalogueSync {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #pricing: PricingService;
  readonly #outbound: OutboundGuard;

  constructor(deps: {
    db: Kysely<Database>;
    options: OptionsService;
    pricing: PricingService;
    outbound: OutboundGuard;
  }) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#pricing = deps.pricing;
    this.#outbound = deps.outbound;
  }

  async preview(): Promise<SyncPreview> {
    const { url, state } = await this.#load();
    return { missing: state.missing, conflicts: state.conflicts, source: { url } };
  }

  async apply(request: SyncRequest): Promise<SyncResult> {
    const { url, catalogue, state } = await this.#load();
    const upstream = new Map(catalogue.models.map((m) => [m.model_name, m]));
    const vendorsByName = new Map(catalogue.vendors.map((v) => [v.name, v]));
    const result: SyncResult = {
      created_models: 0,
      created_vendors: 0,
      updated_models: 0,
      updated_prices: 0,
      skipped_models: [],
      created_list: [],
      updated_list: [],
      priced_list: [],
      source: { url },
    };
    const missing = new Set(state.missing);
    const toCreate = new Set(request.create ?? state.missing);
    const chosen = new Map<string, Set<SyncField>>();
    for (const { model_name, fields } of request.overwrite ?? []) {
      const offered = new Set(state.conflicts.find((c) => c.model_name === model_name)?.fields.map((f) => f.field));
      const picked = fields.filter((f) => offered.has(f));
      if (picked.length === 0) result.skipped_models.push(model_name);
      else chosen.set(model_name, new Set(picked));
    }

    // Prices: the option maps as stored, changed for every chosen `price`; validated and written with the rows.
    const maps = Object.fromEntries(
      Object.values(PRICE_KEYS).map((key) => [key, { ...this.#options.getJson<Record<string, number>>(key) }]),
    ) as Record<(typeof PRICE_KEYS)[keyof typeof PRICE_KEYS], Record<string, number>>;
    for (const [name, fields] of chosen) {
      if (!fields.has('price')) continue;
      const up = upstream.get(name)!;
      for (const [field, key] of Object.entries(PRICE_KEYS) as Array<[keyof Price, keyof typeof maps]>) {
        const value = up[field];
        if (value !== undefined) maps[key][name] = value;
      }
      // Priced by ratio upstream: a per-call price left here would still win over the ratio.
      if (up.model_price === undefined && up.model_ratio !== undefined) delete maps.ModelPrice[name];
      result.priced_list.push(name);
    }
    const priceEntries = result.priced_list.length
      ? Object.values(PRICE_KEYS).map((key) => ({ key, value: JSON.stringify(maps[key]) }))
      : [];
    for (const { key, value } of priceEntries) this.#pricing.assertOptionEditAllowed(key, value);

    const writeRows = async (trx: Transaction<Database>) => {
      const vendorIds = new Map<string, number | null>();
      const vendorId = async (name: string | undefined): Promise<number | null> => {
        if (!name) return null;
        if (!vendorIds.has(name)) vendorIds.set(name, await ensureVendor(trx, name, vendorsByName.get(name), result));
        return vendorIds.get(name)!;
      };
      const time = Math.floor(Date.now() / 1000);
      for (const name of toCreate) {
        const up = upstream.get(name);
        if (!missing.has(name) || !up) {
          result.skipped_models.push(name);
          continue;
        }
        await trx
          .insertInto('models')
          .values({
            model_name: name,
            description: up.description ?? '',
            icon: up.icon ?? '',
            tags: up.tags ?? '',
            vendor_id: await vendorId(up.vendor_name),
            endpoints: up.endpoints ?? '',
            status: up.status ?? 1,
            name_rule: up.name_rule ?? 0,
            created_time: time,
            updated_time: time,
          })
          .execute();
        result.created_models++;
        result.created_list.push(name);
      }
      for (const [name, fields] of chosen) {
        const up = upstream.get(name)!;
        const changes: Record<string, unknown> = {};
        for (const field of fields) {
          if (field === 'price') continue;
          if (field === 'vendor') changes.vendor_id = await vendorId(up.vendor_name);
          else changes[field] = up[field];
        }
        if (Object.keys(changes).length === 0) continue;
        await trx
          .updateTable('models')
          .set({ ...changes, updated_time: time })
          .where('model_name', '=', name)
          .where('sync_official', '<>', 0)
          .execute();
        result.updated_models++;
        result.updated_list.push(name);
      }
    };
    // A model created by hand meanwhile (after the preview) makes the whole apply refuse, writing nothing.
    await unique(
      priceEntries.length > 0
        ? this.#options.setMany(priceEntries, { alongside: writeRows })
        : this.#db.transaction().execute(writeRows),
      E.MODEL_NAME_TAKEN,
    );
    result.updated_prices = result.priced_list.length;
    return result;
  }

  async #load() {
    const url = this.#options.get(CATALOGUE_URL_OPTION).trim();
    if (url === '') throw new AppError(E.CATALOGUE_URL_NOT_SET);
    const catalogue = await fetchCatalogue(this.#outbound, url);
    return { url, catalogue, state: await this.#compare(catalogue) };
  }

  /** What differs between the upstream catalogue and ours, for served models and our own entries. */
  async #compare(catalogue: UpstreamCatalogue) {
    const served = new Set((await this.#pricing.catalogue()).map((item) => item.model_name));
    const entries = await this.#db.selectFrom('models').selectAll().execute();
    const vendorNames = new Map(
      (await this.#db.selectFrom('vendors').select(['id', 'name']).execute()).map((v) => [v.id, v.name]),
    );
    const byName = new Map(entries.map((e) => [e.model_name, e]));
    const maps = this.#pricing.maps();
    const missing: string[] = [];
    const conflicts: SyncPreview['conflicts'] = [];
    for (const up of catalogue.models) {
      const local = byName.get(up.model_name);
      if (!local && !served.has(up.model_name)) continue;
      if (!local && !describing(entries, up.model_name)) missing.push(up.model_name);
      const fields: FieldDifference[] =
        local && local.sync_official !== 0 ? metadataDifferences(local, up, vendorNames) : [];
      const localPrice: Price = {
        model_ratio: maps.ModelRatio[up.model_name] ?? null,
        completion_ratio: maps.CompletionRatio[up.model_name] ?? null,
        model_price: maps.ModelPrice[up.model_name] ?? null,
      };
      const upstreamPrice = priceOf(up);
      if (upstreamPrice && (local?.sync_official ?? 1) !== 0) {
        const differs = (Object.keys(upstreamPrice) as Array<keyof Price>).some(
          (k) => upstreamPrice[k] !== localPrice[k],
        );
        if (differs) fields.push({ field: 'price', local: localPrice, upstream: upstreamPrice });
      }
      if (fields.length > 0) conflicts.push({ model_name: up.model_name, fields });
    }
    return { missing: missing.sort(), conflicts };
  }
}

function metadataDifferences(local: ModelRow, up: UpstreamModel, vendorNames: Map<number, string>): FieldDifference[] {
  const fields: FieldDifference[] = [];
  const text = (field: 'description' | 'icon' | 'tags' | 'endpoints') => {
    const value = up[field];
    if (value !== undefined && value.trim() !== local[field].trim())
      fields.push({ field, local: local[field], upstream: value });
  };
  text('description');
  text('icon');
  text('tags');
  const localVendor = local.vendor_id === null ? '' : (vendorNames.get(local.vendor_id) ?? '');
  if (up.vendor_name !== undefined && up.vendor_name.trim() !== localVendor) {
    fields.push({ field: 'vendor', local: localVendor, upstream: up.vendor_name });
  }
  text('endpoints');
  if (up.name_rule !== undefined && up.name_rule !== local.name_rule) {
    fields.push({ field: 'name_rule', local: local.name_rule, upstream: up.name_rule });
  }
  if (up.status !== undefined && up.status !== local.status) {
    fields.push({ field: 'status', local: local.status, upstream: up.status });
  }
  return fields;
}

/** The price fields the upstream entry carries (only those), or undefined when it carries none. */
function priceOf(up: UpstreamModel): Partial<Price> | undefined {
  const price: Partial<Price> = {};
  for (const key of Object.keys(PRICE_KEYS) as Array<keyof Price>) if (up[key] !== undefined) price[key] = up[key];
  return Object.keys(price).length > 0 ? price : undefined;
}

async function ensureVendor(
  trx: Transaction<Database>,
  name: string,
  upstream: UpstreamVendor | undefined,
  result: SyncResult,
): Promise<number> {
  const existing = await trx.selectFrom('vendors').select('id').where('name', '=', name).executeTakeFirst();
  if (existing) return existing.id;
  const time = Math.floor(Date.now() / 1000);
  const created = await trx
    .insertInto('vendors')
    .values({
      name,
      description: upstream?.description ?? '',
      icon: upstream?.icon ?? '',
      status: upstream?.status ?? 1,
      created_time: time,
      updated_time: time,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  result.created_vendors++;
  return created.id;
}
