import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { parseStatusCodeRanges, statusCodeInRanges } from './status-code-ranges.ts';
import { validateOption } from './validate.ts';

/** The AppError validateOption throws for this input. */
function rejection(key: string, value: string): AppError {
  try {
    validateOption(key, value);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error(`${key}=${JSON.stringify(value)} was accepted`);
}

describe('validateOption', () => {
  it('rejects unknown keys with 400 OPTION_UNKNOWN', () => {
    const error = rejection('NoSuchOption', 'x');
    expect([error.code, error.status]).toEqual(['OPTION_UNKNOWN', 400]);
    expect(error.localized('en')).toBe('Unknown option: NoSuchOption');
    expect(error.localized('zh')).toBe('未知的配置项：NoSuchOption');
  });

  it('takes an IANA time zone for the period quotas, trimmed, and refuses any other name', () => {
    expect(validateOption('quota_setting.period_timezone', ' Asia/Shanghai ')).toBe('Asia/Shanghai');
    expect(validateOption('quota_setting.period_timezone', 'UTC')).toBe('UTC');
    for (const bad of ['', 'Mars/Olympus_Mons', 'GMT+25']) {
      const error = rejection('quota_setting.period_timezone', bad);
      expect([error.code, error.status]).toEqual(['OPTION_INVALID_TIME_ZONE', 400]);
    }
  });

  it('takes booleans only as true and false', () => {
    expect(validateOption('RegisterEnabled', 'false')).toBe('false');
    expect(validateOption('RegisterEnabled', ' true ')).toBe('true');
    for (const bad of ['1', 'yes', 'True', '']) {
      expect(rejection('RegisterEnabled', bad).code).toBe('OPTION_NOT_BOOLEAN');
    }
  });

  it('takes integers for integer options and normalises them', () => {
    expect(validateOption('RetryTimes', '3')).toBe('3');
    expect(validateOption('RetryTimes', ' 007 ')).toBe('7');
    for (const bad of ['1.5', 'abc', '', '1e3', '99999999999999999999']) {
      expect(rejection('RetryTimes', bad).code).toBe('OPTION_NOT_INTEGER');
    }
    const negative = rejection('RetryTimes', '-1');
    expect(negative.code).toBe('OPTION_TOO_SMALL');
    expect(negative.localized('en')).toBe('RetryTimes must be at least 0');
  });

  it('takes decimal numbers for number options', () => {
    expect(validateOption('USDExchangeRate', '7.10')).toBe('7.1');
    expect(validateOption('ChannelDisableThreshold', '.5')).toBe('0.5');
    for (const bad of ['seven', '', 'NaN', 'Infinity', '1,5', '0x10']) {
      expect(rejection('USDExchangeRate', bad).code).toBe('OPTION_NOT_NUMBER');
    }
    const zero = rejection('USDExchangeRate', '0');
    expect(zero.code).toBe('OPTION_NOT_ABOVE');
    expect(zero.localized('en')).toBe('USDExchangeRate must be greater than 0');
  });

  it('enforces the spec bounds: thinking budget percentages 0.1 to 1', () => {
    for (const key of [
      'gemini.thinking_adapter_budget_tokens_percentage',
      'claude.thinking_adapter_budget_tokens_percentage',
    ]) {
      expect(validateOption(key, '0.1')).toBe('0.1');
      expect(validateOption(key, '1')).toBe('1');
      const low = rejection(key, '0.05');
      expect([low.code, low.localized('en')]).toEqual(['OPTION_TOO_SMALL', `${key} must be at least 0.1`]);
      const high = rejection(key, '1.5');
      expect([high.code, high.localized('en')]).toEqual(['OPTION_TOO_LARGE', `${key} must be at most 1`]);
      expect(high.localized('zh')).toBe(`${key} 不能大于 1`);
    }
  });

  it('enforces the spec bounds: ping interval, rate limits, quota amounts', () => {
    expect(rejection('general_setting.ping_interval_seconds', '0').code).toBe('OPTION_TOO_SMALL');
    expect(validateOption('general_setting.ping_interval_seconds', '1')).toBe('1');
    expect(validateOption('ModelRequestRateLimitDurationMinutes', '0')).toBe('0');
    expect(rejection('ModelRequestRateLimitDurationMinutes', '-1').code).toBe('OPTION_TOO_SMALL');
    expect(validateOption('ModelRequestRateLimitCount', '0')).toBe('0');
    expect(rejection('ModelRequestRateLimitCount', '-1').code).toBe('OPTION_TOO_SMALL');
    expect(validateOption('ModelRequestRateLimitSuccessCount', '1')).toBe('1');
    const success = rejection('ModelRequestRateLimitSuccessCount', '0');
    expect(success.localized('en')).toBe('ModelRequestRateLimitSuccessCount must be at least 1');
    for (const key of [
      'QuotaForNewUser',
      'QuotaForInviter',
      'QuotaForInvitee',
      'QuotaRemindThreshold',
      'PreConsumedQuota',
    ]) {
      expect(validateOption(key, '0')).toBe('0');
      expect(rejection(key, '-5').code).toBe('OPTION_TOO_SMALL');
      expect(rejection(key, '2.5').code).toBe('OPTION_NOT_INTEGER');
    }
    expect(validateOption('LogRetentionDays', '30')).toBe('30');
    expect(rejection('LogRetentionDays', '-1').code).toBe('OPTION_TOO_SMALL');
  });

  it('says "不是合法的 JSON 字符串" for JSON that does not parse', () => {
    const error = rejection('ModelRatio', '{"gpt-4o": 1.25,');
    expect([error.code, error.status]).toEqual(['OPTION_INVALID_JSON', 400]);
    expect(error.localized('zh')).toBe('不是合法的 JSON 字符串');
    expect(error.localized('en')).toBe('not a valid JSON string');
    expect(rejection('Chats', '').code).toBe('OPTION_INVALID_JSON');
  });

  it('checks the shape of JSON options and points at the bad spot', () => {
    const ratio = rejection('ModelRatio', '{"gpt-4o": "cheap"}');
    expect(ratio.code).toBe('OPTION_INVALID_SHAPE');
    expect(ratio.localized('en')).toBe('ModelRatio has the wrong shape: $["gpt-4o"] must be a number ≥ 0');
    expect(ratio.localized('zh')).toBe('ModelRatio 格式不正确：$["gpt-4o"] 应为不小于 0 的数字');
    expect(rejection('ModelRatio', '{"gpt-4o": -1}').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('ModelRatio', '[1, 2]').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('GroupGroupRatio', '{"vip": 0.9}').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('AutoGroups', '{"default": 1}').localized('en')).toBe(
      'AutoGroups has the wrong shape: $ must be an array',
    );
    expect(rejection('AutoGroups', '["default", 2]').localized('en')).toContain('$[1] must be a string');
    expect(rejection('Chats', '{}').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('UserUsableGroups', '["default"]').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('claude.default_max_tokens', '{"default": 81.5}').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('gemini.safety_settings', '{"default": "SOMETIMES"}').localized('en')).toContain(
      'must be one of OFF, BLOCK_NONE',
    );
    expect(rejection('PayMethods', '[{"name": "Alipay"}]').localized('en')).toBe(
      'PayMethods has the wrong shape: $[0]["type"] must be a string',
    );
    expect(rejection('ModelRequestRateLimitGroup', '{"vip": [10]}').code).toBe('OPTION_INVALID_SHAPE');
    expect(rejection('ModelRequestRateLimitGroup', '{"vip": [10, 0]}').code).toBe('OPTION_INVALID_SHAPE');
    expect(validateOption('ModelRequestRateLimitGroup', '{"vip": [10, 5]}')).toBe('{"vip": [10, 5]}');
  });

  it('checks group rate limits: group -> model or "*" -> only rpm and tpm, whole numbers ≥ 0', () => {
    const groups = '{"vip": {"*": {"rpm": 60}, "gpt-4o": {"tpm": 10000}}}';
    expect(validateOption('rate_limit_setting.groups', groups)).toBe(groups);
    expect(rejection('rate_limit_setting.groups', '{"vip": {"*": {"rpn": 60}}}').localized('en')).toBe(
      'rate_limit_setting.groups has the wrong shape: $["vip"]["*"]["rpn"] must be an object with only rpm, tpm',
    );
    expect(rejection('rate_limit_setting.groups', '{"vip": {"*": {"tpm": 1.5}}}').localized('en')).toContain(
      '$["vip"]["*"]["tpm"] must be an integer ≥ 0',
    );
    expect(rejection('rate_limit_setting.groups', '{"vip": {"*": 60}}').code).toBe('OPTION_INVALID_SHAPE');
  });

  it('keeps valid JSON as written', () => {
    const pretty = '{\n  "gpt-4o": 1.25,\n  "my-model": 0\n}';
    expect(validateOption('ModelRatio', `  ${pretty}\n`)).toBe(pretty);
    expect(validateOption('Chats', '[{"Cherry Studio": "cherrystudio://providers/api-keys?v=1"}]')).toBe(
      '[{"Cherry Studio": "cherrystudio://providers/api-keys?v=1"}]',
    );
  });

  it('checks status code range lists and stores them without spaces', () => {
    expect(validateOption('AutomaticDisableStatusCodes', '401, 500-503 ,')).toBe('401,500-503');
    expect(validateOption('AutomaticRetryStatusCodes', '')).toBe('');
    for (const bad of ['abc', '401-', '99', '600', '503-500', '401;500', '1000', '40 1']) {
      const error = rejection('AutomaticRetryStatusCodes', bad);
      expect(error.code, bad).toBe('OPTION_INVALID_STATUS_CODE_RANGES');
    }
    expect(rejection('AutomaticDisableStatusCodes', '401,abc').localized('en')).toBe(
      'AutomaticDisableStatusCodes: invalid status code range "abc"; use a list like 401,500-503 with codes from 100 to 599',
    );
  });

  it('checks each entry of the fetch_setting IP and port lists', () => {
    expect(validateOption('fetch_setting.ip_list', '["10.0.0.0/8", "203.0.113.7", "2001:db8::/32", ""]')).toBe(
      '["10.0.0.0/8", "203.0.113.7", "2001:db8::/32", ""]',
    );
    expect(validateOption('fetch_setting.allowed_ports', '["443", "8000-9000"]')).toBe('["443", "8000-9000"]');
    expect(validateOption('fetch_setting.allowed_ports', '[]')).toBe('[]');
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0/8']) {
      expect(rejection('fetch_setting.ip_list', JSON.stringify(['8.8.8.8', bad])).code, bad).toBe(
        'OPTION_INVALID_ENTRY',
      );
    }
    for (const bad of ['0', '65536', '9000-8000', 'https', '80,443']) {
      expect(rejection('fetch_setting.allowed_ports', JSON.stringify([bad])).code, bad).toBe('OPTION_INVALID_ENTRY');
    }
    expect(rejection('fetch_setting.allowed_ports', '["443", "99999"]').localized('en')).toBe(
      'fetch_setting.allowed_ports: "99999" is invalid; each entry must be a port or a port range from 1 to 65535, such as 443 or 8000-9000',
    );
    expect(rejection('fetch_setting.ip_list', '["x"]').localized('zh')).toBe(
      'fetch_setting.ip_list 中的 "x" 无效，应为 IP 地址或 CIDR 网段，例如 10.0.0.0/8',
    );
    expect(rejection('fetch_setting.ip_list', '[1]').code).toBe('OPTION_INVALID_SHAPE');
  });

  it('checks URLs and choices', () => {
    expect(validateOption('ServerAddress', 'https://gw.example.com/')).toBe('https://gw.example.com');
    expect(validateOption('general_setting.docs_link', '')).toBe('');
    expect(validateOption('general_setting.docs_link', 'https://docs.example.com/guide/')).toBe(
      'https://docs.example.com/guide/',
    );
    expect(rejection('ServerAddress', 'gw.example.com').code).toBe('OPTION_INVALID_URL');
    expect(rejection('TopUpLink', 'javascript:alert(1)').code).toBe('OPTION_INVALID_URL');
    expect(validateOption('DataExportDefaultTime', 'day')).toBe('day');
    const choice = rejection('DataExportDefaultTime', 'month');
    expect([choice.code, choice.localized('en')]).toEqual([
      'OPTION_INVALID_CHOICE',
      'DataExportDefaultTime must be one of: hour, day, week',
    ]);
  });

  it('checks passkey origins and relying party ids', () => {
    expect(validateOption('passkey.origins', ' https://A.example.com , http://localhost:3000')).toBe(
      'https://a.example.com,http://localhost:3000',
    );
    expect(validateOption('passkey.origins', '')).toBe('');
    expect(rejection('passkey.origins', 'https://a.example.com/login').code).toBe('OPTION_INVALID_ORIGIN');
    expect(rejection('passkey.origins', 'example.com').code).toBe('OPTION_INVALID_ORIGIN');
    expect(rejection('passkey.origins', 'ftp://example.com').localized('en')).toBe(
      'passkey.origins: "ftp://example.com" is invalid; use comma-separated origins such as https://example.com or https://example.com:8443',
    );
    expect(validateOption('passkey.rp_id', ' Example.COM ')).toBe('example.com');
    expect(validateOption('passkey.rp_id', 'localhost')).toBe('localhost');
    expect(rejection('passkey.rp_id', 'https://example.com').code).toBe('OPTION_INVALID_DOMAIN');
    expect(rejection('passkey.rp_id', 'example.com:443').code).toBe('OPTION_INVALID_DOMAIN');
    expect(rejection('passkey.user_verification', 'always').code).toBe('OPTION_INVALID_CHOICE');
    expect(validateOption('passkey.attachment_preference', '')).toBe('');
  });

  it('stores free text exactly as given', () => {
    expect(validateOption('Notice', '  <b>hello</b>\n')).toBe('  <b>hello</b>\n');
    expect(validateOption('SensitiveWords', 'a\nb')).toBe('a\nb');
  });
});

describe('status code ranges', () => {
  it('match codes inside any range', () => {
    const parsed = parseStatusCodeRanges('401,500-503');
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect([400, 401, 499, 500, 503, 504].map((code) => statusCodeInRanges(code, parsed.ranges))).toEqual([
      false,
      true,
      false,
      true,
      true,
      false,
    ]);
  });
});
