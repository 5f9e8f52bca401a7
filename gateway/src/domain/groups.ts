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

/**
 * The groups a user of `userGroup` may pick for tokens (reference §4.2): UserUsableGroups, adjusted
 * for that user group by group_special_usable_group ("+:g" adds, "-:g" removes, a plain name adds),
 * and always the user's own group.
 */
export function usableGroups(options: OptionsService, userGroup: string): Record<string, GroupInfo> {
  const descriptions = { ...options.getJson<Record<string, string>>('UserUsableGroups') };
  const special = options.getJson<Record<string, Record<string, string>>>(
    'group_ratio_setting.group_special_usable_group',
  );
  for (const [rule, desc] of Object.entries(special[userGroup] ?? {})) {
    if (rule.startsWith('-:')) delete descriptions[rule.slice(2)];
    else descriptions[rule.startsWith('+:') ? rule.slice(2) : rule] = desc;
  }
  descriptions[userGroup] ??= userGroup;
  const result: Record<string, GroupInfo> = {};
  for (const [group, desc] of Object.entries(descriptions)) {
    result[group] = { desc, ratio: groupRatio(options, group) };
  }
  return result;
}
