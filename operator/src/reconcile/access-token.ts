import { managedOwners } from '@tollgate/gateway/domain/managed-resource';
import { applyManagedToken, deleteManagedToken, type ManagedTokenSpec } from '@tollgate/gateway/domain/tokens/managed';
import type { AccessTokenUsers } from '../config.ts';
import { httpStatus, type OwnerReference, type Resource, type Secret } from '../kube/client.ts';
import { type AccessTokenSpec, API_VERSION } from '../types/generated.ts';
import { notApplied, type Outcome, type ReconcileContext, type Reconciler, resourceRef, WATCH_LABEL } from './types.ts';

/**
 * The quota last written to the token, kept on the resource: `quota` is the token's remaining quota,
 * written when the token is created and again only when spec.quota changes (not on every pass, which
 * would refill it).
 */
export const APPLIED_QUOTA_ANNOTATION = 'tollgate.dev/applied-quota';

export const secretNameOf = (resource: Resource<AccessTokenSpec>) =>
  resource.spec?.secretName || `${resource.metadata.name}-token`;

const quotaMark = (spec: AccessTokenSpec) => (spec.unlimitedQuota === false ? String(spec.quota ?? 0) : 'unlimited');

/** The token as the gateway's rules see it, or why the spec cannot be one. */
export function tokenSpec(
  resource: Resource<AccessTokenSpec>,
): { ok: true; spec: ManagedTokenSpec; quotaMark: string } | { ok: false; message: string } {
  const spec = resource.spec!;
  let expiresAt = -1;
  if (spec.expiresAt) {
    const ms = Date.parse(spec.expiresAt);
    if (Number.isNaN(ms)) return { ok: false, message: `expiresAt "${spec.expiresAt}" is not a date-time` };
    expiresAt = Math.floor(ms / 1000);
  }
  const mark = quotaMark(spec);
  return {
    ok: true,
    quotaMark: mark,
    spec: {
      user: spec.user,
      name: resource.metadata.name,
      group: spec.group ?? '',
      models: spec.models ?? [],
      unlimitedQuota: spec.unlimitedQuota !== false,
      quota: spec.quota ?? 0,
      applyQuota: resource.metadata.annotations?.[APPLIED_QUOTA_ANNOTATION] !== mark,
      expiresAt,
      allowIps: spec.allowIPs ?? [],
    },
  };
}

/**
 * Whether an AccessToken in `namespace` may mint keys for `user`: only users listed for that
 * namespace or under `*` (ACCESS_TOKEN_USERS). Nothing is allowed by default, root included.
 */
export function userAllowed(users: AccessTokenUsers, namespace: string, user: string): boolean {
  return (users[namespace] ?? []).includes(user) || (users['*'] ?? []).includes(user);
}

export function ownerReference(resource: Resource): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: 'AccessToken',
    name: resource.metadata.name,
    uid: resource.metadata.uid ?? '',
    controller: true,
  };
}

export const ownedBy = (secret: Secret, uid: string) =>
  (secret.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid && ref.controller === true);

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The Secret a workload mounts: the key and where to send it. */
export function tokenSecret(resource: Resource, name: string, key: string, baseUrl: string, existing?: Secret): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...(existing?.metadata ?? {}),
      name,
      namespace: resource.metadata.namespace ?? '',
      labels: {
        ...(existing?.metadata.labels ?? {}),
        [WATCH_LABEL]: 'true',
        'app.kubernetes.io/managed-by': 'tollgate-operator',
      },
      ownerReferences: [
        ...(existing?.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== resource.metadata.uid),
        ownerReference(resource),
      ],
    },
    type: existing?.type ?? 'Opaque',
    data: { apiKey: base64(key), baseURL: base64(baseUrl) },
  };
}

/** Whether the Secret already says what `desired` says (data, label, owner). */
export function secretCurrent(existing: Secret, desired: Secret, uid: string): boolean {
  const data = existing.data ?? {};
  return (
    data.apiKey === desired.data?.apiKey &&
    data.baseURL === desired.data?.baseURL &&
    Object.keys(data).length === 2 &&
    existing.metadata.labels?.[WATCH_LABEL] === 'true' &&
    ownedBy(existing, uid)
  );
}

async function deleteOwnedSecret(ctx: ReconcileContext, namespace: string, name: string): Promise<void> {
  try {
    await ctx.kube.deleteSecret(namespace, name);
  } catch (error) {
    // Without delete rights the garbage collector removes it through its ownerReference.
    if (httpStatus(error) !== 403) throw error;
  }
}

/** AccessToken -> a token for the named user, and a Secret owned by the resource with apiKey and baseURL. */
export const accessTokenReconciler: Reconciler<AccessTokenSpec> = {
  kind: 'AccessToken',
  conditionTypes: ['Ready', 'Synced'],

  secretNames: (resource) => [secretNameOf(resource)],

  async reconcile(resource, ctx): Promise<Outcome> {
    const namespace = resource.metadata.namespace ?? '';
    const uid = resource.metadata.uid ?? '';
    const secretName = secretNameOf(resource);
    const wanted = tokenSpec(resource);
    const status: Record<string, unknown> = { tokenId: resource.status?.tokenId, secretName };
    if (!wanted.ok) return { conditions: notApplied('InvalidSpec', wanted.message), status, retry: true };
    if (!userAllowed(ctx.accessTokenUsers, namespace, wanted.spec.user)) {
      // Nothing is minted or changed; a token made before the policy stays until the resource is deleted.
      const message = `AccessTokens in namespace ${namespace} may not mint keys for user "${wanted.spec.user}" (ACCESS_TOKEN_USERS)`;
      return { conditions: notApplied('UserNotAllowed', message), status, retry: true };
    }
    const result = await applyManagedToken(
      { db: ctx.db, keyring: ctx.keyring, bus: ctx.bus },
      resourceRef(resource),
      wanted.spec,
    );
    if (!result.ok) {
      const reason = result.code === 'USER_NOT_FOUND' ? 'UserNotFound' : 'InvalidSpec';
      return { conditions: notApplied(reason, result.message), status, retry: true };
    }
    status.tokenId = result.tokenId;
    const annotations = wanted.spec.applyQuota ? { [APPLIED_QUOTA_ANNOTATION]: wanted.quotaMark } : undefined;

    // The Secret: created if missing (also after someone deleted it), corrected if changed, never taken over.
    const existing = ctx.secret(namespace, secretName) ?? (await ctx.kube.readSecret(namespace, secretName));
    const desired = tokenSecret(resource, secretName, result.key, ctx.gatewayBaseUrl, existing);
    if (existing && !ownedBy(existing, uid)) {
      return {
        conditions: notApplied(
          'SecretConflict',
          `Secret ${secretName} exists and is not owned by this AccessToken; choose another spec.secretName`,
        ),
        status,
        retry: true,
        ...(annotations ? { annotations } : {}),
      };
    }
    if (!existing) {
      await ctx.kube.createSecret(namespace, desired);
      ctx.logger.info(
        { kind: 'AccessToken', resource: `${namespace}/${resource.metadata.name}`, secret: secretName },
        'Token Secret written',
      );
    } else if (!secretCurrent(existing, desired, uid)) {
      await ctx.kube.replaceSecret(namespace, desired);
      ctx.logger.info(
        { kind: 'AccessToken', resource: `${namespace}/${resource.metadata.name}`, secret: secretName },
        'Token Secret corrected',
      );
    }
    // A Secret written under an earlier spec.secretName goes.
    for (const stale of ctx.secrets(namespace)) {
      if (stale.metadata.name !== secretName && ownedBy(stale, uid))
        await deleteOwnedSecret(ctx, namespace, stale.metadata.name);
    }
    return {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Reconciled',
          message: `Token ${result.tokenId} of user ${wanted.spec.user}; its key is in Secret ${secretName}`,
        },
        {
          type: 'Synced',
          status: 'True',
          reason: 'Synced',
          message: 'The last reconcile wrote what the spec asks for',
        },
      ],
      status,
      ...(annotations ? { annotations } : {}),
    };
  },

  async finalize(resource, ctx) {
    const namespace = resource.metadata.namespace ?? '';
    const uid = resource.metadata.uid ?? '';
    await deleteManagedToken({ db: ctx.db, bus: ctx.bus }, uid);
    const names = new Set([secretNameOf(resource)]);
    for (const secret of ctx.secrets(namespace)) if (ownedBy(secret, uid)) names.add(secret.metadata.name);
    for (const name of names) {
      const secret = ctx.secret(namespace, name) ?? (await ctx.kube.readSecret(namespace, name));
      if (secret && ownedBy(secret, uid)) await deleteOwnedSecret(ctx, namespace, name);
    }
  },

  owners: (ctx) => managedOwners(ctx.db, 'tokens'),

  async removeOrphan(owner, ctx) {
    await deleteManagedToken({ db: ctx.db, bus: ctx.bus }, owner.uid);
  },
};
