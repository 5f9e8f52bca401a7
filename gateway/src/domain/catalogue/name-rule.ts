/** How a catalogue entry's model_name matches served model names (new-api's name_rule values). */
export const NAME_RULES = { exact: 0, prefix: 1, contains: 2, suffix: 3 } as const;

export function nameMatches(rule: number, pattern: string, name: string): boolean {
  switch (rule) {
    case NAME_RULES.exact:
      return name === pattern;
    case NAME_RULES.prefix:
      return name.startsWith(pattern);
    case NAME_RULES.contains:
      return name.includes(pattern);
    case NAME_RULES.suffix:
      return name.endsWith(pattern);
    default:
      return false;
  }
}

/**
 * The entry describing `name`: an exact entry first, else the rule entry with the longest pattern (the most
 * specific), so "gpt-4o" by prefix wins over "gpt" by prefix for "gpt-4o-mini".
 */
export function describing<T extends { model_name: string; name_rule: number }>(
  entries: readonly T[],
  name: string,
): T | undefined {
  let best: T | undefined;
  for (const entry of entries) {
    if (!nameMatches(entry.name_rule, entry.model_name, name)) continue;
    if (entry.name_rule === NAME_RULES.exact) return entry;
    if (!best || entry.model_name.length > best.model_name.length) best = entry;
  }
  return best;
}
