import { describe, expect, it } from 'vitest';
import type { Resource } from '../kube/client.ts';
import type { AccessTokenSpec } from '../types/generated.ts';
import {
  APPLIED_QUOTA_ANNOTATION,
  ownedBy,
  secretCurrent,
  secretNameOf,
  tokenSecret,
  tokenSpec,
  userAllowed,
} from './access-token.ts';

const token = (spec: Partial<AccessTokenSpec>, annotations?: Record<string, string>): Resource<AccessTokenSpec> => ({
  apiVersion: 'tollgate.dev/v1alpha1',
  kind: 'AccessToken',
  metadata: { name: 'batch', namespace: 'jobs', uid: 'uid-1', ...(annotations ? { annotations } : {}) },
  spec: { user: 'alice', ...spec },
});

describe('tokenSpec', () => {
  it('defaults to an unlimited token that never expires, in the user group', () => {
    const result = tokenSpec(token({}));
    expect(result).toEqual({
      ok: true,
      quotaMark: 'unlimited',
      spec: {
        user: 'alice',
        name: 'batch',
        group: '',
        models: [],
        unlimitedQuota: true,
        quota: 0,
        applyQuota: true,
        expiresAt: -1,
        allowIps: [],
      },
    });
  });

  it('writes a quota once: not again while the applied annotation matches, again when spec.quota changes', () => {
    const limited = { unlimitedQuota: false, quota: 1000 };
    expect(tokenSpec(token(limited))).toMatchObject({ quotaMark: '1000', spec: { applyQuota: true } });
    expect(tokenSpec(token(limited, { [APPLIED_QUOTA_ANNOTATION]: '1000' }))).toMatchObject({
      spec: { applyQuota: false },
    });
    expect(tokenSpec(token({ ...limited, quota: 2000 }, { [APPLIED_QUOTA_ANNOTATION]: '1000' }))).toMatchObject({
      quotaMark: '2000',
      spec: { applyQuota: true, quota: 2000 },
    });
  });

  it('reads expiresAt as unix seconds and refuses what is not a date', () => {
    expect(tokenSpec(token({ expiresAt: '2030-01-01T00:00:00Z' }))).toMatchObject({
      spec: { expiresAt: 1_893_456_000 },
    });
    expect(tokenSpec(token({ expiresAt: 'soon' }))).toEqual({
      ok: false,
      message: 'expiresAt "soon" is not a date-time',
    });
  });
});

describe('the token Secret', () => {
  const resource = token({});

  it('is named <name>-token unless spec.secretName says otherwise', () => {
    expect(secretNameOf(resource)).toBe('batch-token');
    expect(secretNameOf(token({ secretName: 'mounted' }))).toBe('mounted');
  });

  it('carries apiKey and baseURL, the watch label, and the resource as controller owner', () => {
    const secret = tokenSecret(resource, 'batch-token', 'sk-abc', 'http://gw:3000');
    expect(secret.metadata).toMatchObject({
      name: 'batch-token',
      namespace: 'jobs',
      labels: { 'tollgate.dev/watch': 'true' },
      ownerReferences: [
        {
          apiVersion: 'tollgate.dev/v1alpha1',
          kind: 'AccessToken',
          name: 'batch',
          uid: 'uid-1',
          controller: true,
        },
      ],
    });
    expect(Buffer.from(secret.data!.apiKey!, 'base64').toString()).toBe('sk-abc');
    expect(Buffer.from(secret.data!.baseURL!, 'base64').toString()).toBe('http://gw:3000');
    expect(ownedBy(secret, 'uid-1')).toBe(true);
    expect(ownedBy(secret, 'other')).toBe(false);
    expect(secretCurrent(secret, secret, 'uid-1')).toBe(true);
  });

  it('is rewritten when its data, label or owner drifted, keeping what others added', () => {
    const desired = tokenSecret(resource, 'batch-token', 'sk-abc', 'http://gw:3000');
    const edited = { ...desired, data: { ...desired.data, apiKey: 'AAAA' } };
    expect(secretCurrent(edited, desired, 'uid-1')).toBe(false);
    const existing = {
      ...desired,
      metadata: { ...desired.metadata, resourceVersion: '7', labels: { team: 'a' }, annotations: { note: 'x' } },
    };
    const rewritten = tokenSecret(resource, 'batch-token', 'sk-abc', 'http://gw:3000', existing);
    expect(rewritten.metadata).toMatchObject({
      resourceVersion: '7',
      labels: { team: 'a', 'tollgate.dev/watch': 'true' },
      annotations: { note: 'x' },
    });
    expect(rewritten.metadata.ownerReferences).toHaveLength(1);
  });
});

describe('userAllowed', () => {
  it('allows only users named for the namespace or under "*", never root by default', () => {
    const users = { jobs: ['alice'], '*': ['batch'] };
    expect(userAllowed(users, 'jobs', 'alice')).toBe(true);
    expect(userAllowed(users, 'web', 'alice')).toBe(false);
    expect(userAllowed(users, 'web', 'batch')).toBe(true);
    expect(userAllowed(users, 'jobs', 'root')).toBe(false);
    expect(userAllowed({}, 'jobs', 'root')).toBe(false);
    expect(userAllowed({ jobs: ['root'] }, 'jobs', 'root')).toBe(true);
  });
});
