import { createHash } from 'node:crypto';

/**
 * The epay ("易支付") protocol most new-api deployments use for online top-up: the browser posts a
 * signed form to `{PayAddress}/submit.php`; the payment site calls the notify URL with the result,
 * signed the same way. The signature is the MD5 of the non-empty parameters (but `sign` and
 * `sign_type`) sorted by name as `k=v&…`, followed by the merchant key.
 */
export function epaySign(params: Readonly<Record<string, string>>, key: string): string {
  const text = Object.keys(params)
    .filter((name) => name !== 'sign' && name !== 'sign_type' && params[name] !== '' && params[name] !== undefined)
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
  return createHash('md5')
    .update(text + key)
    .digest('hex');
}

/** Whether a notification carries a valid signature (compared case-insensitively, as sites differ). */
export function epayVerify(params: Readonly<Record<string, string>>, key: string): boolean {
  const sign = params.sign ?? '';
  return sign !== '' && epaySign(params, key) === sign.toLowerCase();
}
