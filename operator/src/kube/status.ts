/**
 * Status conditions in metav1.Condition's shape (Kubernetes API conventions): every condition the
 * operator owns is written on every pass, with reason, message and the generation it reflects;
 * lastTransitionTime only moves when the condition's status does.
 */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** A condition as a reconcile decides it; times and generations are filled in by `mergeConditions`. */
export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

export const READY = 'Ready';
export const SYNCED = 'Synced';
export const SECRET_RESOLVED = 'SecretResolved';

/** Kubernetes timestamps: RFC 3339 in UTC, whole seconds. */
export function kubeTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** Unix seconds to a Kubernetes timestamp; undefined for 0 or less ("never"). */
export function unixToKubeTime(seconds: number | undefined): string | undefined {
  return seconds && seconds > 0 ? kubeTime(new Date(seconds * 1000)) : undefined;
}

/**
 * The conditions after a pass: `next` in its order, each keeping its previous lastTransitionTime when
 * its status did not change; conditions of other types (someone else's) are kept after them.
 */
export function mergeConditions(
  previous: readonly Condition[] | undefined,
  next: readonly ConditionInput[],
  generation: number | undefined,
  now: string,
): Condition[] {
  const before = new Map((previous ?? []).map((c) => [c.type, c]));
  const merged: Condition[] = next.map((input) => {
    const old = before.get(input.type);
    return {
      type: input.type,
      status: input.status,
      reason: input.reason,
      message: truncate(input.message, 32_768),
      lastTransitionTime: old && old.status === input.status ? old.lastTransitionTime : now,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  });
  const ours = new Set(next.map((c) => c.type));
  for (const condition of previous ?? []) if (!ours.has(condition.type)) merged.push(condition);
  return merged;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Deep equality of JSON values, key order ignored. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/**
 * A JSON merge patch that turns `before` into `after` at the top level: changed or new keys carry
 * their value, keys gone from `after` are set to null. Undefined when nothing changed.
 */
export function mergePatchOf(
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>>,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    if (!sameJson(before?.[key], value)) patch[key] = value;
  }
  for (const key of Object.keys(before ?? {})) {
    if (after[key] === undefined) patch[key] = null;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
        )
      : v,
  );
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
