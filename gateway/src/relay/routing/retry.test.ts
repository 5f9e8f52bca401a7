import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_STATUS_CODES,
  mapStatusCode,
  type RetryInput,
  retryStatusRanges,
  shouldRetry,
  shouldRetryTask,
} from './retry.ts';

const options = { retryStatusCodes: retryStatusRanges(DEFAULT_RETRY_STATUS_CODES) };
const retry = (input: Partial<RetryInput>) => shouldRetry({ status: 500, remainingRetries: 2, ...input }, options);

describe('shouldRetry', () => {
  it.each([
    ['a retryable 500 with retries left', {}, true],
    ['no retries left', { remainingRetries: 0 }, false],
    ['a pinned channel', { pinned: true }, false],
    ['channel affinity asking for no failover', { affinitySkip: true }, false],
    ['a channel:* error, even marked skip-retry', { errorCode: 'channel:model_mapped_error', skipRetry: true }, true],
    ['a channel:* error with a 400', { errorCode: 'channel:no_available_key', status: 400 }, true],
    ['a channel:* error without retries left', { errorCode: 'channel:no_available_key', remainingRetries: 0 }, false],
    ['a channel:* error on a pinned channel', { errorCode: 'channel:no_available_key', pinned: true }, false],
    ['a skip-retry error', { skipRetry: true }, false],
    ['a 200', { status: 200 }, false],
    ['a 2xx', { status: 204 }, false],
    ['a status below 100', { status: 0 }, true],
    ['a status above 599', { status: 600 }, true],
    ['a bad response body', { status: 500, errorCode: 'bad_response_body' }, false],
    ['504', { status: 504 }, false],
    ['524', { status: 524 }, false],
    ['400 (not in the default ranges)', { status: 400 }, false],
    ['408 (not in the default ranges)', { status: 408 }, false],
    ['401', { status: 401 }, true],
    ['429', { status: 429 }, true],
    ['503', { status: 503 }, true],
    ['302', { status: 302 }, true],
  ] as const)('%s → %s', (_, input, expected) => {
    expect(retry(input)).toBe(expected);
  });

  it('follows the configured ranges, but never 504 or 524', () => {
    const narrow = { retryStatusCodes: retryStatusRanges('429,500-599') };
    expect(shouldRetry({ status: 429, remainingRetries: 1 }, narrow)).toBe(true);
    expect(shouldRetry({ status: 401, remainingRetries: 1 }, narrow)).toBe(false);
    expect(shouldRetry({ status: 504, remainingRetries: 1 }, narrow)).toBe(false);
    expect(shouldRetry({ status: 524, remainingRetries: 1 }, narrow)).toBe(false);
    expect(shouldRetry({ status: 500, remainingRetries: 1 }, { retryStatusCodes: retryStatusRanges('') })).toBe(false);
  });
});

describe('shouldRetryTask', () => {
  it.each([
    [429, true],
    [307, true],
    [500, true],
    [502, true],
    [503, true],
    [504, false],
    [524, false],
    [400, false],
    [408, false],
    [200, false],
    [202, false],
    [401, true],
    [404, true],
    [302, true],
  ])('%s → %s', (status, expected) => {
    expect(shouldRetryTask(status)).toBe(expected);
  });
});

describe('retryStatusRanges', () => {
  it('parses once per text and falls back to the default on text the validator refuses', () => {
    const ranges = retryStatusRanges('401,500-503');
    expect(ranges).toEqual([
      { from: 401, to: 401 },
      { from: 500, to: 503 },
    ]);
    expect(retryStatusRanges('401,500-503')).toBe(ranges);
    expect(retryStatusRanges('nonsense')).toEqual(retryStatusRanges(DEFAULT_RETRY_STATUS_CODES));
  });
});

describe('mapStatusCode', () => {
  it.each([
    ['no mapping', 429, undefined, 429],
    ['a string target', 429, { '429': '500' }, 500],
    ['a number target', 429, { '429': 503 }, 503],
    ['a status not in the mapping', 401, { '429': '500' }, 401],
    ['200, never remapped', 200, { '200': '500' }, 200],
    ['a target that is not a status', 429, { '429': 'oops' }, 429],
    ['a target out of range', 429, { '429': 999 }, 429],
    ['an inherited name', 400, Object.create({ '400': '500' }) as Record<string, unknown>, 400],
  ] as const)('%s', (_, status, mapping, expected) => {
    expect(mapStatusCode(status, mapping)).toBe(expected);
  });
});
