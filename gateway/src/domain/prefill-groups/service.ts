import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  deletePrefillGroup,
  findPrefillGroup,
  insertPrefillGroup,
  listPrefillGroups,
  type PrefillGroupRow,
  prefillGroupNameTaken,
  updatePrefillGroup,
} from '../../store/repositories/prefill-groups.ts';
import { PREFILL_GROUP_ERRORS } from './errors.ts';

export const PREFILL_GROUP_TYPES = ['model', 'tag', 'endpoint'] as const;
export type PrefillGroupType = (typeof PREFILL_GROUP_TYPES)[number];

/** A group as new-api answers it: `items` is the stored JSON value (a list of strings, or the endpoint text). */
export interface PrefillGroupView {
  id: number;
  name: string;
  type: string;
  items: string[] | string;
  description: string;
  created_time: number;
  updated_time: number;
}

export interface PrefillGroupInput {
  id?: number | undefined;
  name?: string | undefined;
  type?: string | undefined;
  items?: unknown;
  description?: string | undefined;
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Prefill groups: named lists of models or tags (or an endpoint map) that the channel editor offers to
 * fill a channel from, so an operator keeps the lists they paste often in one place.
 */
export class PrefillGroupService {
  readonly #db: Kysely<Database>;

  constructor(deps: { db: Kysely<Database> }) {
    this.#db = deps.db;
  }

  async list(type?: string): Promise<PrefillGroupView[]> {
    return (await listPrefillGroups(this.#db, type)).map(view);
  }

  async create(input: PrefillGroupInput): Promise<PrefillGroupView> {
    const name = input.name?.trim() ?? '';
    const type = input.type ?? '';
    if (!name || !type) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NAME_REQUIRED);
    const items = itemsText(checkType(type), input.items);
    const at = now();
    const row = await insertPrefillGroup(this.#db, {
      name,
      type,
      items,
      description: input.description ?? '',
      created_time: at,
      updated_time: at,
    });
    if (!row) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NAME_TAKEN);
    return view(row);
  }

  /** Changes the fields sent; a type change needs items of the new type. */
  async update(input: PrefillGroupInput): Promise<PrefillGroupView> {
    if (!input.id) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_ID_REQUIRED);
    const current = await findPrefillGroup(this.#db, input.id);
    if (!current) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NOT_FOUND);
    const name = input.name === undefined ? current.name : input.name.trim();
    if (!name) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NAME_REQUIRED);
    const type = checkType(input.type || current.type);
    if (input.items === undefined && type !== current.type) {
      throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_ITEMS_INVALID);
    }
    const items = input.items === undefined ? current.items : itemsText(type, input.items);
    if (await prefillGroupNameTaken(this.#db, name, current.id)) {
      throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NAME_TAKEN);
    }
    try {
      const row = await updatePrefillGroup(this.#db, current.id, {
        name,
        type,
        items,
        description: input.description ?? current.description,
        updated_time: now(),
      });
      if (!row) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NOT_FOUND);
      return view(row);
    } catch (error) {
      // A rename racing another one to the same name: the unique index decides.
      if ((error as { code?: string }).code === '23505')
        throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NAME_TAKEN);
      throw error;
    }
  }

  async delete(id: number): Promise<void> {
    if (!(await deletePrefillGroup(this.#db, id))) throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_NOT_FOUND);
  }
}

function checkType(type: string): PrefillGroupType {
  if (!(PREFILL_GROUP_TYPES as readonly string[]).includes(type)) {
    throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_TYPE_INVALID);
  }
  return type as PrefillGroupType;
}

/** The JSON text stored for a group's items: model and tag groups hold distinct non-empty strings. */
function itemsText(type: PrefillGroupType, items: unknown): string {
  if (type === 'endpoint') {
    if (typeof items !== 'string') throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_ITEMS_INVALID);
    if (items.trim() !== '') {
      try {
        JSON.parse(items);
      } catch {
        throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_ITEMS_INVALID);
      }
    }
    return JSON.stringify(items);
  }
  if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) {
    throw new AppError(PREFILL_GROUP_ERRORS.PREFILL_GROUP_ITEMS_INVALID);
  }
  const cleaned = [...new Set(items.map((i) => i.trim()).filter((i) => i !== ''))];
  return JSON.stringify(cleaned);
}

function view(row: PrefillGroupRow): PrefillGroupView {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    items: JSON.parse(row.items) as string[] | string,
    description: row.description,
    created_time: Number(row.created_time),
    updated_time: Number(row.updated_time),
  };
}
