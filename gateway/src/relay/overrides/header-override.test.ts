import { describe, expect, it } from 'vitest';
import { applyHeaderOverride, type HeaderOverrideInput, isPassThroughRule } from './header-override.ts';

const client = {
  host: 'gateway.example',
  authorization: 'Bearer sk-client',
  'x-api-key': 'sk-client',
  'x-goog-api-key': 'sk-client',
  cookie: 'session=1',
  'content-length': '42',
  // The client's body coding: the relay sends a body of its own, never compressed.
  'content-encoding': 'zstd',
  'accept-encoding': 'gzip',
  connection: 'keep-alive, x-hop',
  'x-hop': 'hop',
  'keep-alive': 'timeout=5',
  'transfer-encoding': 'chunked',
  expect: '100-continue',
  'sec-websocket-key': 'k',
  'content-type': 'application/json',
  'user-agent': 'sdk/1.0',
  'x-trace-id': 'trace-123',
  'x-stainless-lang': 'js',
  'x-list': ['a', 'b'],
};

const input: HeaderOverrideInput = { apiKey: 'sk-upstream', clientHeaders: client };

/** The adaptor's own headers, then the override; answers the final headers. */
function apply(override: Record<string, unknown>, given: HeaderOverrideInput = input): Record<string, string> {
  const headers: Record<string, string> = { Authorization: 'Bearer sk-upstream', 'content-type': 'application/json' };
  const error = applyHeaderOverride(headers, override, given);
  if (error) throw error;
  return headers;
}

describe('header_override', () => {
  it('sets static headers, replacing the adaptor header whatever its spelling', () => {
    expect(apply({ 'X-Tenant': 't1', AUTHORIZATION: 'Basic abc' })).toEqual({
      authorization: 'Basic abc',
      'content-type': 'application/json',
      'x-tenant': 't1',
    });
  });

  it('fills {api_key} with the key of the attempt, even one holding $ patterns', () => {
    expect(apply({ 'api-key': '{api_key}', 'x-auth': 'Key {api_key}/{api_key}' })).toMatchObject({
      'api-key': 'sk-upstream',
      'x-auth': 'Key sk-upstream/sk-upstream',
    });
    expect(apply({ 'api-key': '{api_key}' }, { apiKey: "k$&$'$1" })['api-key']).toBe("k$&$'$1");
  });

  it('copies a client header with {client_header:Name}, skipping it when absent', () => {
    expect(apply({ 'X-Upstream-Trace': '{client_header:X-Trace-Id}', 'x-none': '{client_header:x-missing}' })).toEqual({
      Authorization: 'Bearer sk-upstream',
      'content-type': 'application/json',
      'x-upstream-trace': 'trace-123',
    });
    expect(apply({ 'x-list': '{client_header:x-list}' })['x-list']).toBe('a, b');
  });

  it('passes every client header with *, except hop-by-hop, transport and credential headers', () => {
    const headers = apply({ '*': '' });
    expect(headers).toEqual({
      Authorization: 'Bearer sk-upstream',
      'content-type': 'application/json',
      'user-agent': 'sdk/1.0',
      'x-trace-id': 'trace-123',
      'x-stainless-lang': 'js',
      'x-list': 'a, b',
    });
  });

  it('passes headers whose name matches re: or regex: patterns, case-insensitively', () => {
    expect(apply({ 're:^X-Stainless-': '' })).toEqual({
      Authorization: 'Bearer sk-upstream',
      'content-type': 'application/json',
      'x-stainless-lang': 'js',
    });
    expect(apply({ 'regex:trace|agent': 'ignored' })).toMatchObject({
      'x-trace-id': 'trace-123',
      'user-agent': 'sdk/1.0',
    });
    // Credentials stay out even when a pattern names them.
    expect(apply({ 're:.*': '' }).authorization).toBeUndefined();
  });

  it('lets explicit entries win over pass-through', () => {
    expect(apply({ '*': '', 'user-agent': 'tollgate', 'x-trace-id': 'fixed' })).toMatchObject({
      'user-agent': 'tollgate',
      'x-trace-id': 'fixed',
    });
  });

  it('skips client-dependent entries when there is no client (channel tests)', () => {
    expect(apply({ '*': '', 'x-trace': '{client_header:x-trace-id}', 'x-static': 's' }, { apiKey: 'k' })).toEqual({
      Authorization: 'Bearer sk-upstream',
      'content-type': 'application/json',
      'x-static': 's',
    });
  });

  it('sets Host when asked explicitly', () => {
    expect(apply({ Host: 'upstream.internal' }).host).toBe('upstream.internal');
  });

  it('leaves headers alone without an override, and skips blank values', () => {
    const headers = { a: '1' };
    expect(applyHeaderOverride(headers, undefined, input)).toBeUndefined();
    expect(headers).toEqual({ a: '1' });
    expect(apply({ 'x-blank': '   ' })['x-blank']).toBeUndefined();
  });

  it.each([
    ['a non-string value', { 'x-n': 5 }],
    ['a placeholder that is not the whole value', { 'x-t': 'pre {client_header:x-trace-id}' }],
    ['a placeholder naming no header', { 'x-t': '{client_header: }' }],
    ['an empty pattern', { 're:': '' }],
    ['a bad pattern', { 're:(': '' }],
    ['a line break in a value', { 'x-t': 'a\r\nInjected: 1' }],
  ])('refuses %s with a channel error, leaving the headers untouched', (_, override) => {
    const headers = { a: '1' };
    const error = applyHeaderOverride(headers, override, input);
    expect(error?.code).toBe('channel:header_override_invalid');
    expect(headers).toEqual({ a: '1' });
  });

  it('knows pass-through rule keys', () => {
    expect(['*', 're:x', 'REGEX:y', ' * '].every(isPassThroughRule)).toBe(true);
    expect(['x-re:', 'authorization'].some(isPassThroughRule)).toBe(false);
  });
});
