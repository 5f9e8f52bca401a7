import type { OptionsService } from './options/index.ts';

export interface GroupInfo {
  desc: string;
  ratio: number;
}

/** Every group that has a ratio: the groups an administrator can assign. */
export function groupNames(options: OptionsService): string[] {
  return Object.keys(options.getJson<Record<string, number>>('GroupRatio'));
}

export function groupRatio(options: OptionsService, group: string): number {
  return options.getJson<Record<string, number>>('GroupRatio')[group] ?? 1;
}

/** The options usableGroups reads, by identity: getJson hands out the same object until one changes. */
interface UsableInputs {
  usable: Record<string, string>;
  special: Record<string, Record<string, string>>;
  ratios: Record<string, number>;
}

/** Per options service: the inputs last seen and the answers computed from them, per user group. */
const usableMemo = new WeakMap<OptionsService, { inputs: UsableInputs; byUserGroup: Map<string, UsableGroups> }>();

type UsableGroups = Readonly<Record<string, Readonly<GroupInfo>>>;

/**
 * The groups a user of `userGroup` may pick for tokens (reference §4.2): UserUsableGroups, adjusted
 * for that user group by group_special_usable_group ("+:g" adds, "-:g" removes, a plain name adds),
 * and always the user's own group. Computed once per user group until one of the options changes
 * (the relay asks on every request): treat the answer as read-only.
 */
export function usableGroups(options: OptionsService, userGroup: string): UsableGroups {
  const inputs: UsableInputs = {
    usable: options.getJson<Record<string, string>>('UserUsableGroups'),
    special: options.getJson<Record<string, Record<string, string>>>('group_ratio_setting.group_special_usable_group'),
    ratios: options.getJson<Record<string, number>>('GroupRatio'),
  };
  let memo = usableMemo.get(options);
  if (
    !memo ||
    memo.inputs.usable !== inputs.usable ||
    memo.inputs.special !== inputs.special ||
    memo.inputs.ratios !== inputs.ratios
  ) {
    memo = { inputs, byUserGroup: new Map() };
    usableMemo.set(options, memo);
  }
  let groups = memo.byUserGroup.get(userGroup);
  if (!groups) {
    groups = computeUsableGroups(inputs, userGroup);
    memo.byUserGroup.set(userGroup, groups);
  }
  return groups;
}

function computeUsableGroups(inputs: UsableInputs, userGroup: string): UsableGroups {
  const descriptions = { ...inputs.usable };
  for (const [rule, desc] of Object.entries(inputs.special[userGroup] ?? {})) {
    if (rule.startsWith('-:')) delete descriptions[rule.slice(2)];
    else descriptions[rule.startsWith('+:') ? rule.slice(2) : rule] = desc;
  }
  descriptions[userGroup] ??= userGroup;
  const result: Record<string, GroupInfo> = {};
  for (const [group, desc] of Object.entries(descriptions)) {
    result[group] = { desc, ratio: inputs.ratios[group] ?? 1 };
  }
  return Object.freeze(result);
}
