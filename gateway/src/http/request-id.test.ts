import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { newRequestId, requestId } from './request-id.ts';

const withHeader = (value?: string) =>
  ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

describe('request ids', () => {
  it('are version 4 UUIDs without dashes, all different', () => {
    const ids = Array.from({ length: 1000 }, newRequestId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps a safe incoming id and replaces an unsafe one', () => {
    expect(requestId(withHeader('trace-123'))).toBe('trace-123');
    expect(requestId(withHeader('bad id\n'))).toMatch(/^[0-9a-f]{32}$/);
    expect(requestId(withHeader())).toMatch(/^[0-9a-f]{32}$/);
  });
});
