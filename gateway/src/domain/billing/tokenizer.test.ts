import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const tokenizer = fileURLToPath(new URL('./tokenizer.ts', import.meta.url));

/**
 * The vocabularies a fresh process has loaded after `steps`. In a process of its own: the test runner's
 * module cache is shared with other tests that count tokens.
 */
function vocabulariesAfter(steps: string): string[] {
  const script = `
    import { createRequire } from 'node:module';
    import { countTextTokens } from ${JSON.stringify(tokenizer)};
    const loaded = () => Object.keys(createRequire(import.meta.url).cache)
      .filter((file) => file.includes('bpeRanks')).map((file) => file.replace(/^.*[\\\\/]/, '')).sort();
    ${steps}
    console.log(JSON.stringify(loaded()));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '[]') as string[];
}

describe('tokenizer loading', () => {
  it('loads no vocabulary until something is counted, then only the encoding that was needed', () => {
    expect(vocabulariesAfter('')).toEqual([]);
    // Empty text needs no tokenizer at all.
    expect(vocabulariesAfter("countTextTokens('gpt-4o', '');")).toEqual([]);
    expect(vocabulariesAfter("countTextTokens('gpt-4o', 'hello');")).toEqual(['o200k_base.js']);
    expect(vocabulariesAfter("countTextTokens('gpt-4o', 'a'); countTextTokens('claude-sonnet-4', 'b');")).toEqual([
      'cl100k_base.js',
      'o200k_base.js',
    ]);
  });
});
