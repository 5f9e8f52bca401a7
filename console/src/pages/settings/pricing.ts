/**
 * The visual pricing editor's model (spec doc 2 §3 "Model pricing row", §4 "Pricing editor modes", §5
 * "Pricing table"). A row has a fixed price per call, or a ratio and a completion ratio; the editor
 * also shows per-1M-token prices: ratio = input price / 2, completion ratio = output price / input price.
 */

export interface PriceRow {
  name: string;
  /** Fixed price per call (US dollars); wins over the ratios when set. */
  price?: number;
  ratio?: number;
  completionRatio?: number;
}

export type PriceMaps = {
  ModelPrice: Record<string, number>;
  ModelRatio: Record<string, number>;
  CompletionRatio: Record<string, number>;
};

export const PRICE_KEYS = ['ModelPrice', 'ModelRatio', 'CompletionRatio'] as const;

function parseMap(text: string | undefined): Record<string, number> {
  try {
    const parsed = JSON.parse(text || '{}') as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed as Record<string, unknown>).filter(
        (entry): entry is [string, number] => typeof entry[1] === 'number',
      ),
    );
  } catch {
    return {};
  }
}

/** The three option values (JSON text) as maps. */
export function readPriceMaps(options: Record<string, string>): PriceMaps {
  return {
    ModelPrice: parseMap(options.ModelPrice),
    ModelRatio: parseMap(options.ModelRatio),
    CompletionRatio: parseMap(options.CompletionRatio),
  };
}

/** One row per model named in any map (plus `extra` names without a price yet), sorted by name. */
export function rowsFromMaps(maps: PriceMaps, extra: readonly string[] = []): PriceRow[] {
  const names = new Set([
    ...Object.keys(maps.ModelPrice),
    ...Object.keys(maps.ModelRatio),
    ...Object.keys(maps.CompletionRatio),
    ...extra,
  ]);
  return [...names]
    .sort((a, b) => a.localeCompare(b))
    .map((name) => ({
      name,
      price: maps.ModelPrice[name],
      ratio: maps.ModelRatio[name],
      completionRatio: maps.CompletionRatio[name],
    }));
}

/** Rows back to the three maps; rows without any value drop out. */
export function mapsFromRows(rows: readonly PriceRow[]): PriceMaps {
  const maps: PriceMaps = { ModelPrice: {}, ModelRatio: {}, CompletionRatio: {} };
  for (const row of rows) {
    if (row.price !== undefined) maps.ModelPrice[row.name] = row.price;
    if (row.ratio !== undefined) maps.ModelRatio[row.name] = row.ratio;
    if (row.completionRatio !== undefined) maps.CompletionRatio[row.name] = row.completionRatio;
  }
  return maps;
}

/** Which of the three options differ from what was read: the keys to PUT. */
export function changedPriceOptions(
  options: Record<string, string>,
  rows: readonly PriceRow[],
): Array<{ key: string; value: string }> {
  const before = readPriceMaps(options);
  const after = mapsFromRows(rows);
  const sorted = (map: Record<string, number>) =>
    JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => a.localeCompare(b))));
  return PRICE_KEYS.filter((key) => sorted(before[key]) !== sorted(after[key])).map((key) => ({
    key,
    value: JSON.stringify(after[key], null, 2),
  }));
}

/** Spec doc 2 §3/§9: input price per 1M tokens = ratio × 2; output = input × completion ratio. */
export function inputPrice(row: PriceRow): number | undefined {
  return row.ratio === undefined ? undefined : round(row.ratio * 2);
}
export function outputPrice(row: PriceRow): number | undefined {
  const input = inputPrice(row);
  return input === undefined ? undefined : round(input * (row.completionRatio ?? 1));
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

export type PricingMode = 'ratio' | 'price' | 'fixed';

/** How a row is billed: per request when it has a fixed price (which wins), else per token. */
export function rowMode(row: PriceRow): 'fixed' | 'token' | 'none' {
  if (row.price !== undefined) return 'fixed';
  if (row.ratio !== undefined || row.completionRatio !== undefined) return 'token';
  return 'none';
}

/** A typed number: empty means "not given", anything else must be a finite number ≥ 0. */
function readNumber(text: string): { value?: number; bad?: boolean } {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  const n = Number(trimmed);
  if (!Number.isFinite(n) || n < 0) return { bad: true };
  return { value: n };
}

export interface EditInput {
  mode: PricingMode;
  price: string;
  ratio: string;
  completionRatio: string;
  inputPrice: string;
  outputPrice: string;
}

/**
 * The edit modal's result (spec doc 2 §4): per-token by ratio or by price clears the fixed price; per
 * request clears the ratios. Problems: a value that is not a number ("请输入数字"); an input price of 0
 * in the price calculation ("模型价格不能为0").
 */
export function applyEdit(row: PriceRow, input: EditInput): { row?: PriceRow; problem?: string } {
  if (input.mode === 'fixed') {
    const price = readNumber(input.price);
    if (price.bad || price.value === undefined) return { problem: 'settings.pricing.not_number' };
    return { row: { name: row.name, price: price.value } };
  }
  if (input.mode === 'ratio') {
    const ratio = readNumber(input.ratio);
    const completion = readNumber(input.completionRatio);
    if (ratio.bad || completion.bad || ratio.value === undefined) return { problem: 'settings.pricing.not_number' };
    return { row: { name: row.name, ratio: ratio.value, completionRatio: completion.value } };
  }
  const inPrice = readNumber(input.inputPrice);
  const outPrice = readNumber(input.outputPrice);
  if (inPrice.bad || outPrice.bad || inPrice.value === undefined) return { problem: 'settings.pricing.not_number' };
  if (inPrice.value === 0) return { problem: 'settings.pricing.zero_price' };
  const ratio = round(inPrice.value / 2);
  const completionRatio = outPrice.value === undefined ? undefined : round(outPrice.value / inPrice.value);
  return { row: { name: row.name, ratio, completionRatio } };
}

/** The edit modal's starting values for a row. */
export function editInputOf(row: PriceRow): EditInput {
  const show = (n: number | undefined) => (n === undefined ? '' : String(n));
  return {
    mode: row.price !== undefined ? 'fixed' : 'ratio',
    price: show(row.price),
    ratio: show(row.ratio),
    completionRatio: show(row.completionRatio),
    inputPrice: show(inputPrice(row)),
    outputPrice: show(outputPrice(row)),
  };
}

/** A new model's name: not empty, not already in the table ("模型名称已存在"). */
export function checkNewName(rows: readonly PriceRow[], name: string): string | undefined {
  if (name.trim() === '') return 'settings.pricing.name_required';
  if (rows.some((row) => row.name === name.trim())) return 'settings.pricing.name_exists';
  return undefined;
}

export type BatchMode = 'both' | 'ratio' | 'completion' | 'price';

/**
 * Batch pricing (spec doc 2 §5): at least one selected model; both-ratios mode needs both values and
 * numbers; the other modes need a fill value that is a number.
 */
export function applyBatch(
  rows: readonly PriceRow[],
  selected: ReadonlySet<string>,
  mode: BatchMode,
  values: { ratio: string; completionRatio: string; fill: string },
): { rows?: PriceRow[]; problem?: string } {
  if (selected.size === 0) return { problem: 'settings.pricing.select_first' };
  const valid = (text: string) => {
    const n = Number(text.trim());
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  };
  let update: (row: PriceRow) => PriceRow;
  if (mode === 'both') {
    if (values.ratio.trim() === '' || values.completionRatio.trim() === '') {
      return { problem: 'settings.pricing.both_required' };
    }
    const ratio = valid(values.ratio);
    const completionRatio = valid(values.completionRatio);
    if (ratio === undefined || completionRatio === undefined) return { problem: 'settings.pricing.valid_number' };
    update = (row) => ({ name: row.name, ratio, completionRatio });
  } else {
    if (values.fill.trim() === '') return { problem: 'settings.pricing.fill_required' };
    const fill = valid(values.fill);
    if (fill === undefined) return { problem: 'settings.pricing.valid_number' };
    update =
      mode === 'price'
        ? (row) => ({ name: row.name, price: fill })
        : mode === 'ratio'
          ? (row) => ({ name: row.name, ratio: fill, completionRatio: row.completionRatio })
          : (row) => ({ name: row.name, ratio: row.ratio ?? 1, completionRatio: fill });
  }
  return { rows: rows.map((row) => (selected.has(row.name) ? update(row) : row)) };
}

/** Enabled models with neither a fixed price nor a ratio (the unset-ratio models sub-tab). */
export function unsetModels(maps: PriceMaps, enabled: readonly string[]): string[] {
  return [...new Set(enabled)]
    .filter((name) => maps.ModelPrice[name] === undefined && maps.ModelRatio[name] === undefined)
    .sort((a, b) => a.localeCompare(b));
}
