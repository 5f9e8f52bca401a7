import { describe, expect, it } from 'vitest';
import { OPTION_DEFINITIONS } from '../../../../gateway/src/domain/options/definitions.ts';
import { changedOptions, checkField, type OptionField, saveOutcome } from './options.ts';
import {
  applyBatch,
  applyEdit,
  changedPriceOptions,
  checkNewName,
  editInputOf,
  inputPrice,
  outputPrice,
  readPriceMaps,
  rowsFromMaps,
  unsetModels,
} from './pricing.ts';
import {
  MODEL_RATIO_SECTION,
  MODEL_SECTIONS,
  OPERATION_SECTIONS,
  OTHER_SECTIONS,
  RATE_LIMIT_SECTIONS,
  SYSTEM_SECTIONS,
} from './sections.ts';

describe('settings sections', () => {
  it('only name options the gateway knows', () => {
    const known = new Set<string>(OPTION_DEFINITIONS.map((d) => d.key));
    const sections = [
      ...OPERATION_SECTIONS,
      MODEL_RATIO_SECTION,
      ...RATE_LIMIT_SECTIONS,
      ...MODEL_SECTIONS,
      ...SYSTEM_SECTIONS,
      ...OTHER_SECTIONS,
    ];
    const unknown = sections.flatMap((s) => s.fields.map((f) => f.key)).filter((key) => !known.has(key));
    expect(unknown).toEqual([]);
  });
  it('has nine operation sections', () => {
    expect(OPERATION_SECTIONS).toHaveLength(9);
  });
});

describe('option checks and changes (spec doc 2 §5, §7)', () => {
  const json: OptionField = { key: 'Chats', kind: 'json', label: '' };
  const budget: OptionField = { key: 'b', kind: 'number', label: '', min: 0.1, max: 1 };
  const secret: OptionField = { key: 's', kind: 'secret', label: '' };
  const flag: OptionField = { key: 'f', kind: 'switch', label: '' };
  it('checks JSON and bounds', () => {
    expect(checkField(json, '{')?.message).toBe('settings.validation.invalid_json');
    expect(checkField(json, '[]')).toBeUndefined();
    expect(checkField(budget, '0.05')?.message).toBe('settings.validation.min');
    expect(checkField(budget, '1.5')?.message).toBe('settings.validation.max');
    expect(checkField(budget, 'x')?.message).toBe('settings.validation.number');
  });
  it('writes only changed keys; an empty secret keeps the stored one', () => {
    const fields = [json, budget, secret, flag];
    const original = { Chats: '[]', b: '0.6', f: 'false' };
    expect(changedOptions(fields, original, { Chats: '[ ]', b: '0.60', s: '', f: 'false' })).toEqual([]);
    expect(changedOptions(fields, original, { Chats: '[]', b: '0.7', s: 'new', f: 'true' })).toEqual([
      { key: 'b', value: '0.7' },
      { key: 's', value: 'new' },
      { key: 'f', value: 'true' },
    ]);
  });
  it('tells saved, partial and failed apart', () => {
    expect(saveOutcome([{ ok: true }])).toBe('saved');
    expect(saveOutcome([{ ok: true }, { ok: false }])).toBe('partial');
    expect(saveOutcome([{ ok: false }])).toBe('failed');
  });
});

describe('visual pricing editor (spec doc 2 §3, §4, §5)', () => {
  const options = {
    ModelPrice: '{"mj": 0.1}',
    ModelRatio: '{"gpt-4o": 1.25, "mj": 3}',
    CompletionRatio: '{"gpt-4o": 4}',
  };
  const rows = rowsFromMaps(readPriceMaps(options));
  it('shows per-1M prices: ratio × 2 and × completion ratio', () => {
    const gpt = rows.find((r) => r.name === 'gpt-4o')!;
    expect(inputPrice(gpt)).toBe(2.5);
    expect(outputPrice(gpt)).toBe(10);
  });
  it('turns prices into ratios, refuses 0 and non-numbers, clears the other mode', () => {
    const gpt = rows.find((r) => r.name === 'gpt-4o')!;
    const input = editInputOf(gpt);
    expect(applyEdit(gpt, { ...input, mode: 'price', inputPrice: '5', outputPrice: '20' }).row).toEqual({
      name: 'gpt-4o',
      ratio: 2.5,
      completionRatio: 4,
    });
    expect(applyEdit(gpt, { ...input, mode: 'price', inputPrice: '0' }).problem).toBe('settings.pricing.zero_price');
    expect(applyEdit(gpt, { ...input, mode: 'ratio', ratio: 'abc' }).problem).toBe('settings.pricing.not_number');
    expect(applyEdit(gpt, { ...input, mode: 'fixed', price: '0.02' }).row).toEqual({ name: 'gpt-4o', price: 0.02 });
    const mj = rows.find((r) => r.name === 'mj')!;
    expect(editInputOf(mj).mode).toBe('fixed');
    expect(applyEdit(mj, { ...editInputOf(mj), mode: 'ratio', ratio: '2' }).row).toEqual({ name: 'mj', ratio: 2 });
  });
  it('refuses duplicate names and checks batch input', () => {
    expect(checkNewName(rows, 'gpt-4o')).toBe('settings.pricing.name_exists');
    expect(applyBatch(rows, new Set(), 'both', { ratio: '1', completionRatio: '1', fill: '' }).problem).toBe(
      'settings.pricing.select_first',
    );
    const some = new Set(['gpt-4o']);
    expect(applyBatch(rows, some, 'both', { ratio: '1', completionRatio: '', fill: '' }).problem).toBe(
      'settings.pricing.both_required',
    );
    expect(applyBatch(rows, some, 'both', { ratio: '1', completionRatio: 'x', fill: '' }).problem).toBe(
      'settings.pricing.valid_number',
    );
    expect(applyBatch(rows, some, 'price', { ratio: '', completionRatio: '', fill: '' }).problem).toBe(
      'settings.pricing.fill_required',
    );
    expect(applyBatch(rows, some, 'price', { ratio: '', completionRatio: '', fill: 'x' }).problem).toBe(
      'settings.pricing.valid_number',
    );
  });
  it('saves only the price options that changed', () => {
    expect(changedPriceOptions(options, rows)).toEqual([]);
    const edited = rows.map((r) => (r.name === 'gpt-4o' ? { ...r, ratio: 2 } : r));
    expect(changedPriceOptions(options, edited).map((c) => c.key)).toEqual(['ModelRatio']);
  });
  it('lists enabled models without a price or ratio', () => {
    expect(unsetModels(readPriceMaps(options), ['gpt-4o', 'new-model', 'mj'])).toEqual(['new-model']);
  });
});
