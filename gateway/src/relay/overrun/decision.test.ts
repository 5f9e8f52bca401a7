import { describe, expect, it } from 'vitest';
import { afterTopUp, decide, type Standing } from './decision.ts';

/** 2 quota a completion token; a top-up adds 100 tokens' worth (200), asked for below half of it (100). */
const base: Standing = { reserved: 1_000, spent: 0, quotaPerToken: 2, stepQuota: 200, refused: false };

describe('the top-up decision', () => {
  it('lets the stream go unchecked for as many characters as its headroom has tokens', () => {
    expect(decide({ ...base, spent: 400 })).toEqual({ action: 'go', checkAfterChars: 300 });
    expect(decide({ ...base, spent: 900 })).toEqual({ action: 'go', checkAfterChars: 50 });
    // A cheap model's headroom is many tokens; a check still comes at the next character at least.
    expect(decide({ ...base, spent: 899, quotaPerToken: 1_000 })).toEqual({ action: 'go', checkAfterChars: 1 });
  });

  it('asks for a step once the headroom falls below half a step, and when spent past it', () => {
    expect(decide({ ...base, spent: 901 })).toEqual({ action: 'top-up', amount: 200 });
    expect(decide({ ...base, spent: 1_000 })).toEqual({ action: 'top-up', amount: 200 });
    expect(decide({ ...base, spent: 1_350 })).toEqual({ action: 'top-up', amount: 200 });
  });

  it('goes on after a granted top-up, and asks again while it is still short', () => {
    expect(afterTopUp({ ...base, spent: 950 }, true)).toEqual({ action: 'go', checkAfterChars: 125 });
    expect(afterTopUp({ ...base, spent: 1_150 }, true)).toEqual({ action: 'top-up', amount: 200 });
  });

  it('runs on what is held after a refusal, checking every chunk, and is cut once it is spent', () => {
    const refused = afterTopUp({ ...base, spent: 950 }, false);
    expect(refused).toEqual({ action: 'go', checkAfterChars: 0 });
    expect(decide({ ...base, spent: 990, refused: true })).toEqual({ action: 'go', checkAfterChars: 0 });
    // Spent: one more ask (quota may have come back), then the cut.
    expect(decide({ ...base, spent: 1_000, refused: true })).toEqual({ action: 'top-up', amount: 200 });
    expect(afterTopUp({ ...base, spent: 1_000, refused: true }, false)).toEqual({ action: 'cut' });
    expect(afterTopUp({ ...base, spent: 1_000, refused: true }, true)).toEqual({ action: 'go', checkAfterChars: 100 });
  });

  it('cuts at once when a refusal comes with nothing left', () => {
    expect(afterTopUp({ ...base, spent: 1_001 }, false)).toEqual({ action: 'cut' });
  });
});
