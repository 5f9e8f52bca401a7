import { describe, expect, it } from 'vitest';
import { tencentError, tencentErrorStatus } from './errors.ts';

describe('Tencent error statuses', () => {
  it.each([
    ['AuthFailure.SignatureFailure', 401],
    ['AuthFailure.SecretIdNotFound', 401],
    ['LimitExceeded', 429],
    ['RequestLimitExceeded', 429],
    ['ResourceInsufficient.ChargeResourceExhaust', 403],
    ['InvalidParameterValue.Model', 400],
    ['MissingParameter', 400],
    ['FailedOperation.EngineServerError', 502],
  ])('%s → %i', (code, status) => {
    expect(tencentErrorStatus(code)).toBe(status);
  });

  it('finds Response.Error only in an error answer', () => {
    expect(tencentError('{"Response":{"Error":{"Code":"LimitExceeded","Message":"slow down"}}}')).toEqual({
      code: 'LimitExceeded',
      message: 'slow down',
    });
    expect(tencentError('{"Response":{"Choices":[]}}')).toBeUndefined();
    expect(tencentError('not json')).toBeUndefined();
  });
});
