import { readFileSync } from 'node:fs';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countBounded, EXACT_LIMIT, RUN_LIMIT } from './bounded-count.ts';
import { countTextTokens } from './tokenizer.ts';

const plain = { disallowedSpecial: new Set<string>() };
const source = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');

// Ordinary text of every kind a prompt carries, each under EXACT_LIMIT: its count must not move.
const corpus: Record<string, string> = {
  prose:
    'It was the best of times, it was the worst of times; it was the age of wisdom. "Quotes", (parentheses), ' +
    "don't, we'll, I'm — dashes… and numbers 1,234,567.89 or 2026-11-26T16:55:00Z.\n\n  Indented line.\r\n",
  code: source('./estimate.ts'),
  test: source('./estimate.test.ts').slice(0, 30_000),
  chinese: '网关在本地计算提示词的令牌数量，并据此计费。用户问：“今天天气怎么样？”助手答：“晴，25℃。”\n',
  mixed: 'Emoji 😀👍🏽 and accents: café, naïve, Ærøskøbing; Кириллица, العربية, हिन्दी, 日本語のテキスト。',
  json: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], n: [1, 2, 3] }).repeat(50),
  url: 'https://example.com/a/very/long/path?with=query&and=more#fragment '.repeat(40),
  spaces: `def f():\n${'    '.repeat(40)}return 1\n`,
};

/** Every piece `countBounded` hands to the encoder, with the encoder's count. */
function pieces(text: string): { tokens: number; seen: string[] } {
  const seen: string[] = [];
  const tokens = countBounded(text, (piece) => {
    seen.push(piece);
    return o200k(piece, plain);
  });
  return { tokens, seen };
}

describe('bounded token count', () => {
  it('counts ordinary prose, code, JSON and CJK with punctuation exactly as the encoder does', () => {
    for (const [name, text] of Object.entries(corpus)) {
      expect(text.length, name).toBeLessThan(EXACT_LIMIT);
      expect(countTextTokens('gpt-4o', text), name).toBe(o200k(text, plain));
      expect(countTextTokens('gpt-3.5-turbo', text), name).toBe(cl100k(text, plain));
    }
  });

  it('hands ordinary text to the encoder whole, in one call', () => {
    const { seen } = pieces(corpus.code!);
    expect(seen).toEqual([corpus.code]);
  });

  it('cuts a run longer than RUN_LIMIT into slices of at most RUN_LIMIT, keeping the text around it whole', () => {
    const text = `before the run ${'x'.repeat(RUN_LIMIT * 3 + 10)} after the run`;
    const { seen } = pieces(text);
    expect(seen.join('')).toBe(text);
    expect(seen[0]).toBe('before the run ');
    expect(seen.at(-1)).toBe(' after the run');
    expect(Math.max(...seen.map((piece) => piece.length))).toBeLessThanOrEqual(RUN_LIMIT);
    expect(seen).toHaveLength(6);
  });

  it('cuts runs of symbols, white space and unpunctuated Chinese too, never inside a surrogate pair', () => {
    for (const run of ['😀'.repeat(RUN_LIMIT + 7), ' '.repeat(RUN_LIMIT * 2), '字'.repeat(RUN_LIMIT * 2 + 1)]) {
      const { seen } = pieces(run);
      expect(seen.join('')).toBe(run);
      expect(seen.length).toBeGreaterThan(1);
      for (const piece of seen) {
        expect(piece.length).toBeLessThanOrEqual(RUN_LIMIT);
        expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece)).toBe(false);
      }
    }
  });

  it('counts the first EXACT_LIMIT characters and the rest by bytes at the measured tokens per byte', () => {
    // A counter of one token per character makes the rule visible: ASCII is 1 byte a character,
    // Chinese 3, so the estimate of the rest must land on the character count in both cases.
    for (const unit of ['ab c', '中文 字']) {
      const text = unit.repeat(100_000);
      const seen: string[] = [];
      const tokens = countBounded(text, (piece) => {
        seen.push(piece);
        return piece.length;
      });
      expect(seen.join('')).toBe(text.slice(0, EXACT_LIMIT));
      expect(tokens).toBe(text.length);
    }
  });

  it('counts 1 MB of one letter within 1 % of its true count, measured on a 16 KB sample', () => {
    const sample = 'a'.repeat(16_384);
    const perChar = o200k(sample, plain) / sample.length;
    const megabyte = 'a'.repeat(1_000_000);
    const counted = countTextTokens('gpt-4o', megabyte);
    expect(Math.abs(counted - perChar * megabyte.length)).toBeLessThanOrEqual(megabyte.length * perChar * 0.01);
  });

  it('counts 1 MB of base64 and of unpunctuated Chinese within 2 % of the rule applied to a smaller sample', () => {
    const bytes = Buffer.alloc(750_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
    for (const text of [bytes.toString('base64'), '网关在本地计算提示词的令牌数量并据此计费'.repeat(50_000)]) {
      const sample = text.slice(0, 200_000);
      const expected = (countTextTokens('gpt-4o', sample) / Buffer.byteLength(sample)) * Buffer.byteLength(text);
      expect(Math.abs(countTextTokens('gpt-4o', text) - expected)).toBeLessThanOrEqual(expected * 0.02);
    }
  });
});
