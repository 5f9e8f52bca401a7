import { describe, expect, it } from 'vitest';
import type { Resource, Secret } from '../kube/client.ts';
import type { ChannelSpec } from '../types/generated.ts';
import { channelInput, channelStatus, resolveKey } from './channel.ts';

const channel = (spec: Partial<ChannelSpec>): Resource<ChannelSpec> => ({
  apiVersion: 'tollgate.dev/v1alpha1',
  kind: 'Channel',
  metadata: { name: 'openai', namespace: 'ai', uid: 'u1', generation: 1 },
  spec: { type: 1, keySecretRef: { name: 'k' }, models: ['gpt-4o'], ...spec },
});

const secret = (data: Record<string, string>): Secret => ({
  metadata: { name: 'k', namespace: 'ai' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

describe('channelInput', () => {
  it('gives every field, defaults included, so the row becomes exactly the resource', () => {
    expect(channelInput(channel({}))).toEqual({
      name: 'ai/openai',
      type: 1,
      base_url: '',
      models: ['gpt-4o'],
      groups: ['default'],
      model_mapping: '',
      status_code_mapping: '',
      priority: 0,
      weight: 0,
      tag: '',
      auto_ban: 1,
      test_model: '',
      openai_organization: '',
      other: '',
      param_override: '',
      header_override: '',
    });
  });

  it('writes maps as JSON with sorted keys, so the same map always gives the same text', () => {
    const input = channelInput(
      channel({
        modelMapping: { b: 'B', a: 'A' },
        headerOverride: { 'X-Two': '2', 'X-One': '1' },
        paramOverride: { temperature: 0.2 },
        statusCodeMapping: { '400': '500' },
        groups: ['vip'],
        autoBan: false,
        organization: 'org-1',
      }),
    );
    expect(input).toMatchObject({
      model_mapping: '{"a":"A","b":"B"}',
      header_override: '{"X-One":"1","X-Two":"2"}',
      param_override: '{"temperature":0.2}',
      status_code_mapping: '{"400":"500"}',
      groups: ['vip'],
      auto_ban: 0,
      openai_organization: 'org-1',
    });
  });
});

describe('resolveKey', () => {
  it('decodes the key, several lines included', () => {
    expect(resolveKey(secret({ apiKey: 'sk-1\nsk-2' }), 'k', 'apiKey')).toEqual({ ok: true, key: 'sk-1\nsk-2' });
  });

  it('names what is missing: the Secret, the key in it, or any content', () => {
    expect(resolveKey(undefined, 'k', 'apiKey')).toMatchObject({ ok: false, reason: 'SecretNotFound' });
    expect(resolveKey(secret({ other: 'x' }), 'k', 'apiKey')).toMatchObject({
      ok: false,
      reason: 'SecretKeyNotFound',
      message: 'Secret k has no key "apiKey"',
    });
    expect(resolveKey(secret({ apiKey: '  \n' }), 'k', 'apiKey')).toMatchObject({
      ok: false,
      reason: 'SecretKeyEmpty',
    });
  });

  it('never puts the key in a message', () => {
    const result = resolveKey(secret({ token: 'sk-secret' }), 'k', 'apiKey');
    expect(JSON.stringify(result)).not.toContain('sk-secret');
  });
});

describe('channelStatus', () => {
  it('maps the gateway runtime state to status fields, times as RFC 3339', () => {
    expect(
      channelStatus(
        {
          id: 7,
          status: 3,
          statusReason: 'quota exceeded',
          statusTime: 1_700_000_000,
          testTime: 1_700_000_100,
          responseTime: 250.4,
          usedQuota: 12,
          balance: 3.5,
          balanceUpdatedTime: 0,
          modelCount: 2,
        },
        2,
      ),
    ).toEqual({
      channelId: 7,
      modelCount: 2,
      state: 'autoDisabled',
      stateReason: 'quota exceeded',
      stateSince: '2023-11-14T22:13:20Z',
      lastTest: { time: '2023-11-14T22:15:00Z', latencyMs: 250 },
      usedQuota: 12,
      balance: 3.5,
      balanceUpdated: undefined,
    });
  });

  it('shows only the model count while there is no channel yet', () => {
    expect(channelStatus(undefined, 3)).toEqual({ modelCount: 3 });
  });
});
