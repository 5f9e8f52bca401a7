import { describe, expect, it } from 'vitest';
import { formatDateTime, parseDateTime } from '../../format/time.ts';
import { frtColor, parseOther, statQuery, timeColor } from '../../resources/log/log.ts';
import { chatClients, chatLinkUrl, chatUrl, skKey } from './chatLink.ts';
import { displayPrice, matchesModel, type PricingItem, usdPrices } from './pricing.ts';
import { errorText, SseParser } from './stream.ts';

const item = (over: Partial<PricingItem> = {}): PricingItem => ({
  model_name: 'gpt-4o-mini',
  quota_type: 0,
  model_ratio: 0.075,
  completion_ratio: 4,
  model_price: 0,
  enable_groups: ['default'],
  ...over,
});

describe('pricing (spec doc 3 §5, §9)', () => {
  it('matches model names by case-insensitive substring', () => {
    expect(matchesModel(item(), 'MINI')).toBe(true);
    expect(matchesModel(item(), '  4o-m ')).toBe(true);
    expect(matchesModel(item(), 'claude')).toBe(false);
    expect(matchesModel(item(), '')).toBe(true);
  });
  it('prices per 1M tokens as ratio × 2 × group ratio, completion × completion ratio; per call × group ratio', () => {
    expect(usdPrices(item(), 1)).toEqual({ prompt: 0.15, completion: 0.6, call: 0 });
    expect(usdPrices(item({ quota_type: 1, model_price: 0.02 }), 2).call).toBe(0.04);
  });
  it('shows USD, or the top-up price in USD or CNY', () => {
    const status = { price: 7.3, usd_exchange_rate: 7.3 };
    expect(displayPrice(1.5, { recharge: false, currency: 'CNY' }, status)).toBe('$1.5');
    expect(displayPrice(1, { recharge: true, currency: 'USD' }, { price: 3.65, usd_exchange_rate: 7.3 })).toBe('$0.5');
    expect(displayPrice(1, { recharge: true, currency: 'CNY' }, { price: 3.65, usd_exchange_rate: 7.3 })).toBe('¥3.65');
  });
});

describe('the playground stream (spec doc 3 §7)', () => {
  it('collects content deltas across chunk boundaries and stops at [DONE]', () => {
    const pieces: string[] = [];
    const errors: string[] = [];
    const parser = new SseParser({ onDelta: (t) => pieces.push(t), onError: (t) => errors.push(t) });
    parser.push('data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\ndata: {"choices":[{"del');
    parser.push('ta":{"content":"Hel"}}]}\n\n: keep-alive\n\ndata: {"choices":[{"delta":{"content":"lo"}}]}\r\n\r\n');
    expect(parser.done).toBe(false);
    parser.push('data: [DONE]\n\n');
    expect(pieces.join('')).toBe('Hello');
    expect(parser.done).toBe(true);
    expect(errors).toEqual([]);
  });
  it('reports an error event and a last line without newline', () => {
    const errors: string[] = [];
    const parser = new SseParser({ onDelta: () => {}, onError: (t) => errors.push(t) });
    parser.push('data: {"error":{"message":"quota exhausted"}}');
    parser.end();
    expect(errors).toEqual(['quota exhausted']);
    expect(errorText('{"error":{"message":"no channel"}}', 503)).toBe('no channel');
    expect(errorText('{"success":false,"message":"not logged in"}', 401)).toBe('not logged in');
    expect(errorText('', 502)).toBe('HTTP 502');
  });
});

describe('chat links (spec doc 3 §2)', () => {
  it('puts the encoded address and the sk- key into a template', () => {
    const url = chatUrl(
      'https://chat.example/#/?settings={"key":"{key}","url":"{address}"}',
      'abc',
      'https://gw.example',
    );
    expect(url).toBe('https://chat.example/#/?settings={"key":"sk-abc","url":"https%3A%2F%2Fgw.example"}');
    expect(skKey('sk-abc')).toBe('sk-abc');
    expect(chatLinkUrl('https://chat.example/', 'sk-abc', 'https://gw.example')).toBe(
      `https://chat.example/#/?settings=${encodeURIComponent('{"key":"sk-abc","url":"https://gw.example"}')}`,
    );
  });
});

describe('chat clients of the token list', () => {
  const saved = [{ name: 'Lobe', link: 'https://lobe.example/?key={key}' }];
  const names = (clients: ReturnType<typeof chatClients>) => clients?.map((client) => client.name);

  it('offers ChatLink and ChatLink2 when set, before the saved clients', () => {
    const both = chatClients({ chat_link: 'https://next.example', chat_link2: 'https://mj.example/' }, saved);
    expect(names(both)).toEqual(['ChatGPT Next Web', 'ChatGPT Web & Midjourney', 'Lobe']);
    expect(both?.[1]?.url('abc', 'https://gw.example')).toBe(
      chatLinkUrl('https://mj.example/', 'abc', 'https://gw.example'),
    );
    expect(both?.[2]?.url('abc', 'https://gw.example')).toBe('https://lobe.example/?key=sk-abc');
    expect(names(chatClients({ chat_link: '', chat_link2: 'https://mj.example' }, []))).toEqual([
      'ChatGPT Web & Midjourney',
    ]);
    expect(names(chatClients({}, []))).toEqual([]);
  });

  it('says a badly saved Chats value is bad even when the fixed links are set', () => {
    expect(chatClients({ chat_link: 'https://next.example' }, undefined)).toBeUndefined();
  });
});

describe('usage log helpers (spec doc 3 §9)', () => {
  it('colours use time and first-token time', () => {
    expect([timeColor(100), timeColor(101), timeColor(299), timeColor(300)]).toEqual([
      'success',
      'warning',
      'warning',
      'error',
    ]);
    expect([frtColor(2999), frtColor(3000), frtColor(10_000)]).toEqual(['success', 'warning', 'error']);
  });
  it('sends only set filters to the stat call, and administrators-only ones only for administrators', () => {
    const filters = { type: 0, start_timestamp: 10, model_name: '', username: 'bob', channel: 3, group: 'vip' };
    expect(statQuery(filters, false)).toEqual({ start_timestamp: 10, group: 'vip' });
    expect(statQuery(filters, true)).toEqual({ start_timestamp: 10, group: 'vip', username: 'bob', channel: 3 });
  });
  it('reads other as an object, whatever it holds', () => {
    expect(parseOther('{"frt":12}')).toEqual({ frt: 12 });
    expect(parseOther('[1]')).toEqual({});
    expect(parseOther('not json')).toEqual({});
  });
});

describe('date and time text', () => {
  it('parses yyyy-MM-dd HH:mm:ss and refuses what is not a date', () => {
    const date = parseDateTime('2025-03-04 05:06:07');
    expect(date && formatDateTime(date)).toBe('2025-03-04 05:06:07');
    expect(parseDateTime('2025-03-04T05:06') && formatDateTime(parseDateTime('2025-03-04T05:06')!)).toBe(
      '2025-03-04 05:06:00',
    );
    expect(parseDateTime('2025-02-30 00:00:00')).toBeUndefined();
    expect(parseDateTime('tomorrow')).toBeUndefined();
  });
});
