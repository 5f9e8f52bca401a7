import {
  applyManagedChannel,
  deleteManagedChannel,
  type ManagedChannelSpec,
  type ManagedChannelState,
  managedChannelState,
} from '@tollgate/gateway/domain/channels/managed';
import { managedOwners } from '@tollgate/gateway/domain/managed-resource';
import type { Resource, Secret } from '../kube/client.ts';
import { type ConditionInput, unixToKubeTime } from '../kube/status.ts';
import type { ChannelSpec, ChannelStatus } from '../types/generated.ts';
import { type Outcome, type Reconciler, resourceRef, WATCH_LABEL } from './types.ts';

/** The Secret key a keySecretRef reads when it names none. */
export const DEFAULT_SECRET_KEY = 'apiKey';

/** JSON text of a map with sorted keys, or undefined for none: the same map always gives the same text. */
function jsonText(map: Record<string, unknown> | undefined): string | undefined {
  if (!map || Object.keys(map).length === 0) return undefined;
  const sorted = Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify(sorted);
}

/**
 * The channel's configuration in the API's terms. Every field is given (defaults included), so the
 * row ends up as the resource says whatever it held before. The row's name is namespace/name.
 */
export function channelInput(resource: Resource<ChannelSpec>): ManagedChannelSpec['input'] {
  const spec = resource.spec!;
  return {
    name: `${resource.metadata.namespace ?? ''}/${resource.metadata.name}`,
    type: spec.type,
    base_url: spec.baseURL ?? '',
    models: spec.models ?? [],
    groups: spec.groups && spec.groups.length > 0 ? spec.groups : ['default'],
    model_mapping: jsonText(spec.modelMapping) ?? '',
    status_code_mapping: jsonText(spec.statusCodeMapping) ?? '',
    priority: spec.priority ?? 0,
    weight: spec.weight ?? 0,
    tag: spec.tag ?? '',
    auto_ban: spec.autoBan === false ? 0 : 1,
    test_model: spec.testModel ?? '',
    openai_organization: spec.organization ?? '',
    other: spec.other ?? '',
    param_override: jsonText(spec.paramOverride) ?? '',
    header_override: jsonText(spec.headerOverride) ?? '',
  };
}

export type KeyResolution = { ok: true; key: string } | { ok: false; reason: string; message: string };

/** The key text from the referenced Secret (data is base64; stringData as a fallback for fakes). */
export function resolveKey(secret: Secret | undefined, secretName: string, dataKey: string): KeyResolution {
  if (!secret) {
    return { ok: false, reason: 'SecretNotFound', message: `Secret ${secretName} not found in the namespace` };
  }
  const encoded = secret.data?.[dataKey];
  const text = encoded !== undefined ? Buffer.from(encoded, 'base64').toString('utf8') : secret.stringData?.[dataKey];
  if (text === undefined) {
    return { ok: false, reason: 'SecretKeyNotFound', message: `Secret ${secretName} has no key "${dataKey}"` };
  }
  if (text.trim() === '') {
    return { ok: false, reason: 'SecretKeyEmpty', message: `Secret ${secretName} key "${dataKey}" is empty` };
  }
  return { ok: true, key: text };
}

const STATES = { 1: 'enabled', 2: 'disabled', 3: 'autoDisabled' } as const;

/** The runtime state the gateway keeps, as the resource's status shows it. */
export function channelStatus(state: ManagedChannelState | undefined, modelCount: number): ChannelStatus {
  if (!state) return { modelCount };
  const lastTest =
    state.testTime > 0
      ? { time: unixToKubeTime(state.testTime), latencyMs: Math.max(0, Math.round(state.responseTime)) }
      : undefined;
  return {
    channelId: state.id,
    modelCount,
    state: STATES[state.status as 1 | 2 | 3] ?? 'disabled',
    stateReason: state.statusReason?.slice(0, 1024),
    stateSince: unixToKubeTime(state.statusTime),
    lastTest,
    usedQuota: Math.max(0, state.usedQuota),
    balance: state.balance,
    balanceUpdated: unixToKubeTime(state.balanceUpdatedTime),
  };
}

/** An Event when the gateway has just auto-disabled the channel (runtime state flowing back). */
export function autoDisabledEvent(resource: Resource<ChannelSpec>, next: ChannelStatus): Pick<Outcome, 'events'> {
  if (next.state !== 'autoDisabled' || resource.status?.state === 'autoDisabled') return {};
  const why = next.stateReason ? `: ${next.stateReason}` : '';
  return {
    events: [{ type: 'Warning', reason: 'ChannelAutoDisabled', note: `The gateway disabled the channel${why}` }],
  };
}

function conditions(secret: ConditionInput, ready: ConditionInput, synced: ConditionInput): ConditionInput[] {
  return [ready, secret, synced];
}

export const channelReconciler: Reconciler<ChannelSpec> = {
  kind: 'Channel',
  conditionTypes: ['Ready', 'SecretResolved', 'Synced'],

  secretNames(resource) {
    const name = resource.spec?.keySecretRef?.name;
    return name ? [name] : [];
  },

  async reconcile(resource, ctx): Promise<Outcome> {
    const spec = resource.spec!;
    const namespace = resource.metadata.namespace ?? '';
    const owner = resourceRef(resource);
    const modelCount = spec.models?.length ?? 0;
    const secretName = spec.keySecretRef?.name ?? '';
    const dataKey = spec.keySecretRef?.key || DEFAULT_SECRET_KEY;
    const resolved = resolveKey(ctx.secret(namespace, secretName), secretName, dataKey);
    let secretCondition: ConditionInput = {
      type: 'SecretResolved',
      status: 'True',
      reason: 'SecretFound',
      message: `Key read from Secret ${secretName} (${dataKey})`,
    };
    if (!resolved.ok) {
      let { reason, message } = resolved;
      if (reason === 'SecretNotFound') {
        // The cache only holds labelled Secrets: tell "missing" apart from "not labelled".
        const direct = await ctx.kube.readSecret(namespace, secretName).catch(() => undefined);
        if (direct && direct.metadata.labels?.[WATCH_LABEL] !== 'true') {
          reason = 'SecretNotWatched';
          message = `Secret ${secretName} lacks the label ${WATCH_LABEL}=true; the operator only reads labelled Secrets`;
        }
      }
      secretCondition = { type: 'SecretResolved', status: 'False', reason, message };
    }
    // Without a readable key the rest of the spec is still applied; the stored key stays as it was.
    const result = await applyManagedChannel({ db: ctx.db, keyring: ctx.keyring, bus: ctx.bus }, owner, {
      input: channelInput(resource),
      key: resolved.ok ? resolved.key : undefined,
      multiKeyMode: spec.multiKeyMode === 'polling' ? 'polling' : 'random',
      enabled: spec.enabled !== false,
    });
    if (result.ok && result.changed) {
      ctx.logger.info(
        { kind: 'Channel', resource: `${namespace}/${owner.name}`, channelId: result.state.id },
        'Channel written to the store',
      );
    }
    const status = channelStatus(result.ok ? result.state : await managedChannelState(ctx.db, owner.uid), modelCount);
    if (!result.ok && result.code !== 'CHANNEL_KEY_UNAVAILABLE') {
      const message = `${result.message} (${result.code})`;
      return {
        conditions: conditions(
          secretCondition,
          { type: 'Ready', status: 'False', reason: 'InvalidSpec', message },
          {
            type: 'Synced',
            status: 'False',
            reason: 'InvalidSpec',
            message: 'Nothing was written: the spec is invalid',
          },
        ),
        status,
        retry: true,
      };
    }
    if (secretCondition.status === 'False') {
      return {
        conditions: conditions(
          secretCondition,
          { ...secretCondition, type: 'Ready' },
          {
            type: 'Synced',
            status: 'False',
            reason: secretCondition.reason,
            message: result.ok
              ? 'The configuration was written; the stored key was kept because the Secret could not be read'
              : 'Nothing was written: there is no key to create the channel with',
          },
        ),
        status,
        retry: true,
      };
    }
    if (!result.ok) throw new Error(`unexpected: ${result.code}`);
    return {
      ...autoDisabledEvent(resource, status),
      conditions: conditions(
        secretCondition,
        { type: 'Ready', status: 'True', reason: 'Reconciled', message: `Channel ${result.state.id} matches the spec` },
        {
          type: 'Synced',
          status: 'True',
          reason: 'Synced',
          message: 'The last reconcile wrote what the spec asks for',
        },
      ),
      status,
    };
  },

  async finalize(resource, ctx) {
    const deleted = await deleteManagedChannel({ db: ctx.db, bus: ctx.bus }, resource.metadata.uid ?? '');
    if (deleted > 0) {
      ctx.logger.info(
        { kind: 'Channel', resource: `${resource.metadata.namespace}/${resource.metadata.name}` },
        'Channel deleted from the store',
      );
    }
  },

  owners: (ctx) => managedOwners(ctx.db, 'channels'),

  async removeOrphan(owner, ctx) {
    await deleteManagedChannel({ db: ctx.db, bus: ctx.bus }, owner.uid);
  },
};
