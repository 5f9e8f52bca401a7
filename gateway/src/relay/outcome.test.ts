import { describe, expect, it } from 'vitest';
import { LEDGER_ERRORS } from '../domain/ledger/errors.ts';
import { AppError } from '../errors.ts';
import { HTTP_ERRORS } from '../http/errors.ts';
import { RELAY_ERRORS } from './errors.ts';
import { RELAY_ERROR_TYPES } from './metrics.ts';
import { ending, errorTypeOf } from './outcome.ts';
import { channelRuleError } from './routing/errors.ts';

describe('errorTypeOf', () => {
  it('names each kind of refusal and failure from the error code', () => {
    const cases: Array<[unknown, string]> = [
      [new AppError(RELAY_ERRORS.invalid_token), 'auth'],
      [new AppError(RELAY_ERRORS.model_not_allowed, { model: 'x' }), 'auth'],
      [new AppError(RELAY_ERRORS.rate_limited, { count: 1, minutes: 1 }), 'rate_limit'],
      [new AppError(LEDGER_ERRORS.insufficient_user_quota, { remain: 0 }), 'quota'],
      [new AppError(LEDGER_ERRORS.pre_consume_token_quota_failed, { remain: 0, need: 1 }), 'quota'],
      [new AppError(RELAY_ERRORS.invalid_request, { detail: 'x' }), 'invalid_request'],
      [new AppError(HTTP_ERRORS.BODY_TOO_LARGE), 'invalid_request'],
      [new AppError(RELAY_ERRORS.model_not_found, { group: 'g', model: 'm' }), 'no_channel'],
      [channelRuleError('channel:no_available_key', { channel: 1 }), 'no_channel'],
      [new AppError(LEDGER_ERRORS.quota_ledger_closed), 'unavailable'],
      [new AppError(HTTP_ERRORS.INTERNAL_ERROR), 'internal'],
      [Object.assign(new Error('headers'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), 'timeout'],
      [Object.assign(new Error('body'), { code: 'UND_ERR_BODY_TIMEOUT' }), 'timeout'],
      [Object.assign(new Error('slow'), { name: 'TimeoutError' }), 'timeout'],
      [Object.assign(new Error('too large'), { statusCode: 413 }), 'invalid_request'],
      [new TypeError('bug'), 'internal'],
    ];
    for (const [error, type] of cases) expect([String(error), errorTypeOf(error)]).toEqual([String(error), type]);
  });

  it('falls back to the status for codes it does not know', () => {
    const spec = (status: number) => ({ code: 'SOMETHING', status, message: { zh: 'x', en: 'x' } });
    expect(errorTypeOf(new AppError(spec(401)))).toBe('auth');
    expect(errorTypeOf(new AppError(spec(403)))).toBe('auth');
    expect(errorTypeOf(new AppError(spec(429)))).toBe('rate_limit');
    expect(errorTypeOf(new AppError(spec(404)))).toBe('invalid_request');
    expect(errorTypeOf(new AppError(spec(503)))).toBe('unavailable');
    expect(errorTypeOf(new AppError(spec(502)))).toBe('internal');
  });
});

describe('ending', () => {
  it('counts a finished answer by its status, and a noted failure first', () => {
    expect(ending(true, true, 200, undefined)).toEqual({ status: 200, errorType: 'none' });
    expect(ending(true, true, 401, undefined)).toEqual({ status: 401, errorType: 'auth' });
    expect(ending(true, true, 502, 'upstream')).toEqual({ status: 502, errorType: 'upstream' });
  });

  it('counts a client that left as client_closed: 499 before any answer, else the status it got', () => {
    expect(ending(false, false, 200, undefined)).toEqual({ status: 499, errorType: 'client_closed' });
    expect(ending(false, true, 200, undefined)).toEqual({ status: 200, errorType: 'client_closed' });
  });

  it('keeps the 200 of a stream the upstream cut off, with the error that cut it', () => {
    expect(ending(false, true, 200, 'timeout')).toEqual({ status: 200, errorType: 'timeout' });
  });

  it('only ever yields the documented error types', () => {
    const endings: Array<[boolean, boolean, number]> = [
      [true, true, 200],
      [true, true, 418],
      [true, true, 599],
      [false, false, 200],
    ];
    for (const [finished, headersSent, status] of endings)
      expect(RELAY_ERROR_TYPES).toContain(ending(finished, headersSent, status, undefined).errorType);
  });
});
