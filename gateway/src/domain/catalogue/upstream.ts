import { AppError } from '../../errors.ts';
import type { OutboundGuard } from '../../http/outbound/guard.ts';
import { CATALOGUE_ERRORS as E } from './errors.ts';

/** A model as an upstream catalogue describes it; absent fields stay undefined (they are not compared). */
export interface UpstreamModel {
  model_name: string;
  description?: string;
  icon?: string;
  tags?: string;
  vendor_name?: string;
  /** JSON text, as the models table stores it. */
  endpoints?: string;
  name_rule?: number;
  status?: number;
  model_ratio?: number;
  completion_ratio?: number;
  model_price?: number;
}

export interface UpstreamVendor {
  name: string;
  description?: string;
  icon?: string;
  status?: number;
}

export interface UpstreamCatalogue {
  models: UpstreamModel[];
  vendors: UpstreamVendor[];
}

/** An answer larger than this is refused: a catalogue of every known model is well under 1 MB. */
export const MAX_CATALOGUE_BYTES = 5 * 1024 * 1024;
// Under the 10 s an /api answer may take (the reliability suite); DNS has its own 5 s bound (outbound guard).
const FETCH_TIMEOUT_MS = 8_000;

/**
 * Fetches the catalogue at `url` (through the outbound guard: fetch_setting.* applies) with a timeout
 * and a size cap, and parses it. Throws a CATALOGUE_* AppError naming what went wrong.
 */
export async function fetchCatalogue(outbound: OutboundGuard, url: string): Promise<UpstreamCatalogue> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let text: string;
  try {
    const response = await outbound.send({ url, signal, headers: { accept: 'application/json' }, maxRedirects: 3 });
    if (response.status !== 200) {
      await response.body.dump();
      throw new AppError(E.CATALOGUE_FETCH_FAILED, { reason: `HTTP ${response.status}` });
    }
    text = await readCapped(response.body, MAX_CATALOGUE_BYTES);
  } catch (error) {
    // Our own refusals (HTTP status, size, a URL fetch_setting.* refuses) keep their codes.
    if (error instanceof AppError) throw error;
    const reason = signal.aborted ? 'timed out' : error instanceof Error ? error.message : String(error);
    throw new AppError(E.CATALOGUE_FETCH_FAILED, { reason });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError(E.CATALOGUE_INVALID_JSON);
  }
  return parseCatalogue(json);
}

async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw new AppError(E.CATALOGUE_TOO_LARGE, { max });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Accepts `{models, vendors}`, new-api's envelope `{success, data: [models]}` (or `data: {models, vendors}`),
 * or a bare array of models. Every field that is present must have its type; unknown fields are ignored.
 */
export function parseCatalogue(json: unknown): UpstreamCatalogue {
  let root = json;
  if (isObject(root) && 'data' in root) root = root.data;
  const models = Array.isArray(root) ? root : isObject(root) ? root.models : undefined;
  const vendors = isObject(root) && root.vendors !== undefined ? root.vendors : [];
  if (!Array.isArray(models)) throw invalid('no list of models');
  if (!Array.isArray(vendors)) throw invalid('vendors is not a list');
  return {
    models: models.map((entry, i) => parseModel(entry, `models[${i}]`)),
    vendors: vendors.map((entry, i) => parseVendor(entry, `vendors[${i}]`)),
  };
}

function parseModel(entry: unknown, where: string): UpstreamModel {
  if (!isObject(entry)) throw invalid(`${where} is not an object`);
  const name = entry.model_name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 128) {
    throw invalid(`${where}.model_name must be a name of 1-128 characters`);
  }
  const model: UpstreamModel = { model_name: name.trim() };
  for (const [field, max] of [
    ['description', 65_536],
    ['icon', 128],
    ['tags', 255],
    ['vendor_name', 128],
  ] as const) {
    const value = entry[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.length > max)
      throw invalid(`${where}.${field} must be text of at most ${max}`);
    model[field] = value;
  }
  if (entry.endpoints !== undefined && entry.endpoints !== null && entry.endpoints !== '') {
    // new-api's catalogue carries endpoints as JSON (an array or an object); the table keeps its text.
    const value = typeof entry.endpoints === 'string' ? safeParse(entry.endpoints) : entry.endpoints;
    if (!isObject(value) && !Array.isArray(value)) throw invalid(`${where}.endpoints must be a JSON array or object`);
    model.endpoints = JSON.stringify(value);
  }
  for (const [field, allowed] of [
    ['name_rule', [0, 1, 2, 3]],
    ['status', [0, 1]],
  ] as const) {
    const value = entry[field];
    if (value === undefined || value === null) continue;
    if (!(allowed as readonly unknown[]).includes(value)) throw invalid(`${where}.${field} must be one of ${allowed}`);
    model[field] = value as number;
  }
  for (const field of ['model_ratio', 'completion_ratio', 'model_price'] as const) {
    const value = entry[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw invalid(`${where}.${field} must be a number >= 0`);
    }
    model[field] = value;
  }
  return model;
}

function parseVendor(entry: unknown, where: string): UpstreamVendor {
  if (!isObject(entry)) throw invalid(`${where} is not an object`);
  const name = entry.name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 128) {
    throw invalid(`${where}.name must be a name of 1-128 characters`);
  }
  const vendor: UpstreamVendor = { name: name.trim() };
  for (const [field, max] of [
    ['description', 65_536],
    ['icon', 128],
  ] as const) {
    const value = entry[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.length > max)
      throw invalid(`${where}.${field} must be text of at most ${max}`);
    vendor[field] = value;
  }
  if (entry.status !== undefined && entry.status !== null) {
    if (entry.status !== 0 && entry.status !== 1) throw invalid(`${where}.status must be 0 or 1`);
    vendor.status = entry.status;
  }
  return vendor;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const invalid = (reason: string) => new AppError(E.CATALOGUE_INVALID, { reason });
