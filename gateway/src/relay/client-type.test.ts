import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES, clientType } from './client-type.ts';

describe('clientType', () => {
  it.each([
    ['claude-cli/1.0.83 (external, cli)', 'claude-code'],
    ['claude-code/2.0.1', 'claude-code'],
    ['codex_cli_rs/0.42.0 (Mac OS 15.1.0; arm64) iTerm.app/3.5.10', 'codex'],
    ['codex_exec/0.42.0 (Ubuntu 24.4.0; x86_64)', 'codex'],
    ['Codex/1.0', 'codex'],
    ['OpenAI/Python 1.109.1', 'openai-python'],
    ['AsyncOpenAI/Python 1.109.1', 'openai-python'],
    ['OpenAI/JS 5.23.0', 'openai-node'],
    ['Anthropic/Python 0.69.0', 'anthropic-python'],
    ['Anthropic/JS 0.65.0', 'anthropic-node'],
    ['google-genai-sdk/1.41.0 gl-python/3.12.3', 'google-genai'],
    ['google-genai-sdk/1.21.0 gl-node/v24.8.0', 'google-genai'],
    ['google-api-nodejs-client/9.15.1', 'google-genai'],
    ['gl-node/22.0.0', 'google-genai'],
    ['gl-python/3.11', 'google-genai'],
    ['curl/8.5.0', 'curl'],
    ['python-requests/2.32.3', 'python-requests'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36', 'browser'],
    ['Go-http-client/1.1', 'other'],
    ['node', 'other'],
    ['python-httpx/0.28.1', 'other'],
  ] as const)('%s -> %s', (ua, type) => {
    expect(clientType(ua)).toBe(type);
  });

  it('matches regardless of case and surrounding blanks', () => {
    expect(clientType('  CURL/7.88.1 ')).toBe('curl');
    expect(clientType('openai/python 1.0')).toBe('openai-python');
  });

  it('answers unknown for a missing or blank header', () => {
    expect(clientType(undefined)).toBe('unknown');
    expect(clientType('')).toBe('unknown');
    expect(clientType('   ')).toBe('unknown');
    expect(clientType([])).toBe('unknown');
  });

  it('reads the first of repeated headers', () => {
    expect(clientType(['curl/8.0', 'Mozilla/5.0'])).toBe('curl');
  });

  it('never answers the raw header: every answer is one of the fixed set', () => {
    const samples = ['x'.repeat(100_000), 'Mozilla/5.0', '\u0000', 'sk-secret-value', 'claude-cli/1'];
    for (const ua of samples) expect(CLIENT_TYPES).toContain(clientType(ua));
  });

  it('reads only the start of a very long header', () => {
    expect(clientType(`${'x'.repeat(10_000)} OpenAI/Python 1.0`)).toBe('other');
  });
});
