import { describe, expect, it } from 'vitest';
import type { Resource } from '../kube/client.ts';
import { INSTANCE_LABEL, Ownership } from './ownership.ts';

const resource = (labels?: Record<string, string>, finalizers?: string[]): Resource => ({
  metadata: { name: 'r', namespace: 'ai', ...(labels ? { labels } : {}), ...(finalizers ? { finalizers } : {}) },
});

describe('Ownership', () => {
  it('owns resources labelled with its instance, and unlabelled ones only when it claims them', () => {
    const claiming = new Ownership({ instance: 'blue', claimUnlabelled: true });
    const strict = new Ownership({ instance: 'blue', claimUnlabelled: false });
    expect(claiming.owns(resource({ [INSTANCE_LABEL]: 'blue' }))).toBe(true);
    expect(claiming.owns(resource({ [INSTANCE_LABEL]: 'green' }))).toBe(false);
    expect(claiming.owns(resource())).toBe(true);
    expect(strict.owns(resource())).toBe(false);
    expect(strict.owns(resource({ [INSTANCE_LABEL]: 'blue' }))).toBe(true);
  });

  it('names its finalizer after the instance and counts the legacy one only on its own resources', () => {
    const blue = new Ownership({ instance: 'blue', claimUnlabelled: true });
    expect(blue.finalizer).toBe('tollgate.dev/finalizer-blue');
    const legacy = ['tollgate.dev/finalizer', 'other.io/keep'];
    expect(blue.holds(resource(undefined, legacy))).toBe(true);
    expect(blue.without(resource(undefined, legacy))).toEqual(['other.io/keep']);
    // Another instance's resource: the legacy finalizer is not ours to judge, our own one is.
    const green = { [INSTANCE_LABEL]: 'green' };
    expect(blue.holds(resource(green, legacy))).toBe(false);
    expect(blue.without(resource(green, [...legacy, blue.finalizer]))).toEqual(legacy);
  });
});
