import { describe, expect, it } from 'vitest';
import { describing, NAME_RULES, nameMatches } from './name-rule.ts';

describe('catalogue name rules', () => {
  it('matches by each rule', () => {
    expect(nameMatches(NAME_RULES.exact, 'gpt-4o', 'gpt-4o')).toBe(true);
    expect(nameMatches(NAME_RULES.exact, 'gpt-4o', 'gpt-4o-mini')).toBe(false);
    expect(nameMatches(NAME_RULES.prefix, 'gpt-4', 'gpt-4o')).toBe(true);
    expect(nameMatches(NAME_RULES.contains, 'sonnet', 'claude-3-5-sonnet-latest')).toBe(true);
    expect(nameMatches(NAME_RULES.suffix, '-latest', 'claude-3-5-sonnet-latest')).toBe(true);
    expect(nameMatches(NAME_RULES.suffix, '-latest', 'latest-claude')).toBe(false);
    expect(nameMatches(9, 'x', 'x')).toBe(false);
  });

  it('prefers an exact entry, then the longest matching pattern', () => {
    const entries = [
      { model_name: 'gpt', name_rule: NAME_RULES.prefix },
      { model_name: 'gpt-4o', name_rule: NAME_RULES.prefix },
      { model_name: 'gpt-4o-mini', name_rule: NAME_RULES.exact },
    ];
    expect(describing(entries, 'gpt-4o-mini')?.name_rule).toBe(NAME_RULES.exact);
    expect(describing(entries, 'gpt-4o-2024')?.model_name).toBe('gpt-4o');
    expect(describing(entries, 'gpt-3.5')?.model_name).toBe('gpt');
    expect(describing(entries, 'claude')).toBeUndefined();
  });
});
