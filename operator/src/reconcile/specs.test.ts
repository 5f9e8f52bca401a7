import { describe, expect, it } from 'vitest';
import type { Resource } from '../kube/client.ts';
import type { GroupSpec } from '../types/generated.ts';
import { storedGroup } from './group.ts';
import { priceMode } from './model-price.ts';
import { settingsConditions } from './settings.ts';

describe('ModelPrice', () => {
  it('names the mode for the printer column', () => {
    expect(priceMode({ model: 'm', perToken: { input: 1 } })).toBe('perToken');
    expect(priceMode({ model: 'm', perCall: { price: 1 } })).toBe('perCall');
    expect(priceMode({ model: 'm', tiered: { expression: 'p * 2' } })).toBe('tiered');
    expect(priceMode({ model: 'm' })).toBeUndefined();
    expect(priceMode({ model: 'm', perCall: { price: 1 }, tiered: { expression: 'p' } })).toBeUndefined();
  });
});

describe('Group', () => {
  const group = (spec: GroupSpec): Resource<GroupSpec> => ({ metadata: { name: 'vip-users', namespace: 'ai' }, spec });

  it('is named by spec.name, else by the resource', () => {
    expect(storedGroup(group({ ratio: 1 }))).toEqual({
      name: 'vip-users',
      ratio: 1,
      description: '',
      selectable: false,
      userGroupRatios: {},
      rateLimits: {},
    });
    expect(storedGroup(group({ name: ' vip ', ratio: 0.5, selectable: true })).name).toBe('vip');
    expect(storedGroup(group({ ratio: 1, rateLimits: { '*': { rpm: 5 } } })).rateLimits).toEqual({ '*': { rpm: 5 } });
  });
});

describe('GatewaySettings', () => {
  it('is Ready when every setting applied', () => {
    expect(settingsConditions({ applied: ['A', 'B'], rejected: [] })).toEqual([
      { type: 'Ready', status: 'True', reason: 'Reconciled', message: 'Every setting is applied' },
      { type: 'Synced', status: 'True', reason: 'Synced', message: '2 setting(s) held as declared' },
    ]);
  });

  it('is not Ready while a setting is rejected, and says which and why', () => {
    const [ready] = settingsConditions({
      applied: ['A'],
      rejected: [
        { key: 'B', reason: 'B must be a number' },
        { key: 'C', reason: 'Unknown option: C' },
      ],
    });
    expect(ready).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'InvalidSettings',
      message: '2 setting(s) rejected: B: B must be a number; C: Unknown option: C',
    });
  });
});
