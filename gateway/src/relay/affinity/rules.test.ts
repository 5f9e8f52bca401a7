import { describe, expect, it } from 'vitest';
import { findOptionDefinition } from '../../domain/options/definitions.ts';
import { validateOption } from '../../domain/options/validate.ts';
import { AppError } from '../../errors.ts';
import { claudeCachePrefix, extractKey } from './key-sources.ts';
import { parseAffinityRules } from './rules.ts';

const RULES = 'channel_affinity_setting.rules';

function refusal(value: unknown, language: 'en' | 'zh' = 'en'): string {
  try {
    validateOption(RULES, JSON.stringify(value));
  } catch (error) {
    if (error instanceof AppError) return error.localized(language);
    throw error;
  }
  throw new Error('accepted');
}

describe('channel affinity rules', () => {
  it('accepts the default rules, Tollgate short form and new-api form alike', () => {
    const rules = parseAffinityRules(JSON.parse(findOptionDefinition(RULES)?.default ?? '[]'));
    expect(rules.map((r) => r.name)).toEqual([
      'codex cli trace',
      'claude cli trace',
      'chat prompt cache key',
      'claude cache breakpoints',
    ]);
    const [codex] = rules;
    expect(codex?.paths[0]?.test('/v1/responses')).toBe(true);
    expect(codex?.paths[0]?.test('/v1/responses/compact')).toBe(false);
    expect(codex?.models[0]?.test('gpt-5-codex')).toBe(true);
    expect(codex?.models[0]?.test('claude-opus')).toBe(false);
    expect(codex).toMatchObject({ skipRetryOnFailure: true, includeRuleName: true, includeUsingGroup: true });

    const [newApi] = parseAffinityRules([
      {
        name: 'claude cli trace',
        model_regex: ['^claude-.*$', '^gpt-.*$'],
        path_regex: ['/v1/messages'],
        user_agent_include: ['claude-cli'],
        key_sources: [
          { type: 'request_header', key: 'X-Claude-Code-Session-Id' },
          { type: 'gjson', path: 'metadata.user_id', nested_path: 'session_id' },
        ],
        value_regex: '',
        ttl_seconds: 0,
        skip_retry_on_failure: true,
        include_using_group: true,
        include_rule_name: true,
      },
    ]);
    expect(newApi?.models.map((m) => m.test('gpt-4o'))).toEqual([false, true]);
    expect(newApi?.keySources.map((s) => s.label)).toEqual([
      'header:X-Claude-Code-Session-Id',
      'body:metadata.user_id',
    ]);
  });

  it('refuses on save what it cannot honour, naming the rule and the field', () => {
    expect(refusal([{ name: 'a', model_pattern: '*', key_source: 'body:x', param_override_template: {} }])).toContain(
      'rule 1: param_override_template is not supported',
    );
    expect(refusal([{ name: 'a', model_pattern: '*', key_source: 'body:x', sticky: true }])).toContain(
      'rule 1: unknown field "sticky"',
    );
    expect(refusal([{ name: 'a', model_pattern: '*', key_source: 'body:x', sticky: true }], 'zh')).toBe(
      'channel_affinity_setting.rules 无效：第 1 条规则：未知字段「sticky」',
    );
    expect(refusal([{ name: 'a', model_regex: ['(['], key_source: 'body:x' }])).toContain(
      'rule "a": model_regex: invalid regular expression',
    );
    expect(refusal([{ name: 'a', model_pattern: '*', key_sources: [{ type: 'context_int', key: 'id' }] }])).toContain(
      'key source type "context_int" is not supported',
    );
    expect(refusal([{ name: 'a', model_pattern: '*', key_source: 'cookie:x' }])).toContain(
      'must be body:<path>, header:<name> or claude:cache_prefix',
    );
    expect(refusal([{ name: 'a', model_pattern: '*' }])).toContain('give key_source or key_sources');
    expect(
      refusal([
        { name: 'a', model_pattern: '*', key_source: 'body:x' },
        { name: 'a', model_pattern: '*', key_source: 'body:y' },
      ]),
    ).toContain('the name "a" is used twice');
    expect(refusal([{ name: 'a', model_pattern: '*', key_source: 'body:x', ttl_seconds: -1 }])).toContain(
      'ttl_seconds',
    );
    expect(refusalOrNone([{ name: 'a', model_pattern: '*', key_source: 'body:x' }])).toBeUndefined();
  });
});

function refusalOrNone(value: unknown): string | undefined {
  try {
    validateOption(RULES, JSON.stringify(value));
    return undefined;
  } catch (error) {
    return (error as AppError).localized('en');
  }
}

describe('affinity key sources', () => {
  it('reads body paths, headers and JSON nested in a string', () => {
    const [rule] = parseAffinityRules([
      {
        name: 'a',
        model_pattern: '*',
        key_sources: [
          'header:x-session',
          { type: 'gjson', path: 'metadata.user_id', nested_path: 'session_id' },
          'body:prompt_cache_key',
        ],
      },
    ]);
    const [header, nested, plain] = rule?.keySources ?? [];
    const headers = { 'x-session': ' s-1 ' };
    const body = { metadata: { user_id: '{"session_id":"abc"}' }, prompt_cache_key: 'pck', n: 3 };
    expect(extractKey(header!, { headers, body })).toBe('s-1');
    expect(extractKey(nested!, { headers: {}, body })).toBe('abc');
    expect(extractKey(plain!, { headers: {}, body })).toBe('pck');
    expect(extractKey(plain!, { headers: {}, body: { prompt_cache_key: '  ' } })).toBeUndefined();
    expect(extractKey(plain!, { headers: {}, body: new FormData() })).toBeUndefined();
  });

  it('hashes a Claude request up to its first cache_control block, and only that prefix', () => {
    const breakpoint = { type: 'ephemeral' };
    const system = [{ type: 'text', text: 'You are helpful.', cache_control: breakpoint }];
    const tools = [{ name: 'read', description: 'reads a file', input_schema: { type: 'object' } }];
    // Two turns of one Claude Code conversation: the last breakpoint moves to the newest message.
    const turn1 = claudeCachePrefix({
      tools,
      system,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'first question', cache_control: breakpoint }] }],
    });
    const turn2 = claudeCachePrefix({
      tools,
      system,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'an answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'second question', cache_control: breakpoint }] },
      ],
    });
    expect(turn1).toMatch(/^[0-9a-f]{32}$/);
    expect(turn2).toBe(turn1);
    // Another system prompt, or other tools, is another prefix.
    const otherSystem = claudeCachePrefix({
      tools,
      system: [{ type: 'text', text: 'You are terse.', cache_control: breakpoint }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'first question', cache_control: breakpoint }] }],
    });
    expect(otherSystem).not.toBe(turn1);
    expect(claudeCachePrefix({ tools: [], system, messages: [] })).not.toBe(turn1);
    // With the first breakpoint in a message, the prefix runs through that message.
    const inMessage = (text: string) =>
      claudeCachePrefix({
        system: 'plain',
        messages: [
          { role: 'user', content: [{ type: 'text', text, cache_control: breakpoint }] },
          { role: 'user', content: 'question' },
        ],
      });
    expect(inMessage('doc')).toMatch(/^[0-9a-f]{32}$/);
    expect(inMessage('another doc')).not.toBe(inMessage('doc'));
    expect(claudeCachePrefix({ system: 'plain', messages: [{ role: 'user', content: 'hi' }] })).toBeUndefined();
  });
});
