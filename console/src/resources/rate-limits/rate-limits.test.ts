import { describe, expect, it } from 'vitest';
import { limitsOf, rateRowsProblem, rowsOf } from './rate-limits.ts';

describe('rate limit rows', () => {
  it('shows stored limits as rows, "*" first', () => {
    expect(rowsOf({ 'gpt-4o': { tpm: 500 }, '*': { rpm: 10, tpm: 1000 } })).toEqual([
      { model: '*', rpm: '10', tpm: '1000' },
      { model: 'gpt-4o', rpm: '', tpm: '500' },
    ]);
    expect(rowsOf(undefined)).toEqual([]);
  });

  it('sends the rows as limits, without blank rows or empty limits', () => {
    const rows = [
      { model: ' * ', rpm: '10', tpm: '' },
      { model: 'gpt-4o', rpm: '0', tpm: '500' },
      { model: 'o1', rpm: '', tpm: '' },
      { model: '', rpm: '', tpm: '' },
    ];
    expect(rateRowsProblem(rows)).toBeUndefined();
    expect(limitsOf(rows)).toEqual({ '*': { rpm: 10 }, 'gpt-4o': { tpm: 500 } });
  });

  it('refuses a rule without a model, a limit that is not a whole number, and a model twice', () => {
    expect(rateRowsProblem([{ model: '', rpm: '5', tpm: '' }])).toBe('rate_limits.validation.model_required');
    expect(rateRowsProblem([{ model: '*', rpm: '1.5', tpm: '' }])).toBe('rate_limits.validation.whole_number');
    expect(rateRowsProblem([{ model: '*', rpm: '-1', tpm: '' }])).toBe('rate_limits.validation.whole_number');
    expect(
      rateRowsProblem([
        { model: '*', rpm: '1', tpm: '' },
        { model: ' *', rpm: '', tpm: '2' },
      ]),
    ).toBe('rate_limits.validation.duplicate');
  });
});
