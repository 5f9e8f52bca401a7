import { describe, expect, it } from 'vitest';
import { responseColour } from './constants.ts';
import {
  addCustomModels,
  baseUrlEndsWithV1,
  type Channel,
  channelPayload,
  checkTagPriority,
  checkTagWeight,
  defaultChannelValues,
  passThroughOf,
  tagEditPayload,
  validateChannel,
  withPassThrough,
} from './form.ts';
import { buildRows } from './rows.ts';

describe('response time colours (spec doc 2 §9)', () => {
  it('go untested, green, lime, yellow, red', () => {
    expect([0, 1, 1000, 1001, 3000, 3001, 5000, 5001].map(responseColour)).toEqual([
      'untested',
      'green',
      'green',
      'lime',
      'lime',
      'yellow',
      'yellow',
      'red',
    ]);
  });
});

describe('channel drawer checks (spec doc 2 §5)', () => {
  const valid = { ...defaultChannelValues(), name: 'a', key: 'sk-1', models: ['gpt-4o'] };
  it('needs name and key for a new channel, then a model, then JSON mappings', () => {
    expect(validateChannel({ ...valid, name: ' ' }, true)?.message).toBe('channel.validation.name_key_required');
    expect(validateChannel({ ...valid, key: '' }, true)?.message).toBe('channel.validation.name_key_required');
    expect(validateChannel({ ...valid, key: '' }, false)).toBeUndefined();
    expect(validateChannel({ ...valid, models: [] }, true)?.message).toBe('channel.validation.models_required');
    expect(validateChannel({ ...valid, models: 'x' as never }, true)?.message).toBe(
      'channel.validation.duplicate_submit',
    );
    expect(validateChannel({ ...valid, model_mapping: '{' }, true)?.message).toBe(
      'channel.validation.model_mapping_json',
    );
    expect(validateChannel({ ...valid, param_override: '[' }, true)).toEqual({
      message: 'channel.validation.json_field',
      field: 'channel.form.param_override',
    });
    expect(validateChannel(valid, true)).toBeUndefined();
  });
  it('warns about a base URL ending in /v1', () => {
    expect(baseUrlEndsWithV1('https://api.example.com/v1')).toBe(true);
    expect(baseUrlEndsWithV1('https://api.example.com/v1/')).toBe(true);
    expect(baseUrlEndsWithV1('https://api.example.com/v1beta')).toBe(false);
  });
  it('strips trailing slashes, trims other and parses integers', () => {
    const created = channelPayload({
      ...valid,
      base_url: 'https://x.test//',
      other: ' 2025-04-01-preview ',
      type: 3,
      priority: '3',
      weight: '7',
    }) as {
      channel: Record<string, unknown>;
      mode: string;
    };
    expect(created.mode).toBe('single');
    expect(created.channel).toMatchObject({
      base_url: 'https://x.test',
      other: '2025-04-01-preview',
      priority: 3,
      weight: 7,
    });
    const updated = channelPayload({ ...valid, key: '' }, 5);
    expect(updated).toMatchObject({ id: 5, models: 'gpt-4o', group: 'default' });
    expect(updated).not.toHaveProperty('key');
  });
  it('reports custom models already in the list', () => {
    expect(addCustomModels(['a'], 'b, a\nc')).toEqual({ models: ['a', 'b', 'c'], duplicates: true });
    expect(addCustomModels(['a'], 'b')).toEqual({ models: ['a', 'b'], duplicates: false });
  });
});

describe('tag edits (spec doc 2 §5)', () => {
  const base = {
    tag: 't',
    new_tag: 't',
    models: ['a'],
    groups: ['default'],
    model_mapping: '',
    param_override: '',
    header_override: '',
  };
  it('says nothing changed, sends only what changed, dissolves with an empty tag', () => {
    expect(tagEditPayload(base, { models: ['a'], groups: ['default'] }).problem).toBe(
      'channel.validation.nothing_changed',
    );
    expect(tagEditPayload({ ...base, new_tag: '' }, { models: ['a'], groups: ['default'] }).body).toEqual({
      tag: 't',
      new_tag: '',
    });
    expect(tagEditPayload({ ...base, models: ['a', 'b'] }, { models: ['a'], groups: ['default'] }).body).toEqual({
      tag: 't',
      models: 'a,b',
    });
  });
  it('wants an integer priority and a non-negative integer weight', () => {
    expect(checkTagPriority('-3')).toBe(-3);
    expect(checkTagPriority('1.5')).toBeUndefined();
    expect(checkTagWeight('0')).toBe(0);
    expect(checkTagWeight('-1')).toBeUndefined();
  });
});

describe('tag mode rows', () => {
  const channel = (id: number, tag: string | null, response_time = 0): Channel =>
    ({ id, tag, response_time, status: 1, group: 'default', models: 'm', type: 1, priority: id, weight: 0 }) as Channel;
  it('puts tagged channels under one row with the average response time', () => {
    const rows = buildRows([channel(1, 'x', 1000), channel(2, null), channel(3, 'x', 3000)], true);
    expect(rows.map((row) => (row.kind === 'tag' ? `tag:${row.tag}` : row.channel.id))).toEqual(['tag:x', 2]);
    const tag = rows[0];
    expect(tag?.kind === 'tag' && tag.responseTime).toBe(2000);
    expect(tag?.kind === 'tag' && tag.children.map((c) => c.id)).toEqual([1, 3]);
    expect(buildRows([channel(1, 'x')], false)).toEqual([{ kind: 'channel', channel: channel(1, 'x') }]);
  });
});

describe('the pass-through switch over the setting JSON', () => {
  it('reads pass_through_body_enabled, and nothing from JSON that is not an object', () => {
    expect(passThroughOf('')).toBe(false);
    expect(passThroughOf('{"proxy":"","pass_through_body_enabled":false}')).toBe(false);
    expect(passThroughOf('{"pass_through_body_enabled":true}')).toBe(true);
    expect(passThroughOf('{"proxy":')).toBeUndefined();
    expect(passThroughOf('[1]')).toBeUndefined();
  });

  it('switches it, keeping the other settings, and leaves an empty setting empty when off', () => {
    const on = withPassThrough('{"proxy":"socks5://p","system_prompt":"be brief"}', true);
    expect(JSON.parse(on)).toEqual({ proxy: 'socks5://p', system_prompt: 'be brief', pass_through_body_enabled: true });
    expect(JSON.parse(withPassThrough(on, false))).toEqual({ proxy: 'socks5://p', system_prompt: 'be brief' });
    expect(withPassThrough(withPassThrough('', true), false)).toBe('');
  });
});
