import { describe, expect, it } from 'vitest';
import { barkAddress } from './notification-push.ts';

const note = { type: 'quota_exceed' as const, title: 'Low / quota', content: 'Only $1 left & more' };

describe('barkAddress', () => {
  it('fills new-api placeholders with the URL-encoded title and text', () => {
    expect(barkAddress('https://api.day.app/KEY/{{title}}/{{content}}?group=gw', note)).toBe(
      'https://api.day.app/KEY/Low%20%2F%20quota/Only%20%241%20left%20%26%20more?group=gw',
    );
  });

  it('appends title and text as path segments to a bare device URL', () => {
    expect(barkAddress('https://api.day.app/KEY/', note)).toBe(
      'https://api.day.app/KEY/Low%20%2F%20quota/Only%20%241%20left%20%26%20more',
    );
  });
});
