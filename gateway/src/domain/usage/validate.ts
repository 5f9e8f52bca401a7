import type { ConsumeRecord, ErrorRecord } from './types.ts';

const INT32_MAX = 2_147_483_647;

function int32(name: string, value: unknown): void {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > INT32_MAX) {
    throw new TypeError(`usage record: ${name} must be an integer from 0 to ${INT32_MAX}, got ${String(value)}`);
  }
}

function quota(name: string, value: unknown): void {
  if (!Number.isSafeInteger(value))
    throw new TypeError(`usage record: ${name} must be an integer, got ${String(value)}`);
}

/** A client type is a short name from a fixed set (relay/client-type.ts), never a raw User-Agent. */
const CLIENT_TYPE_MAX = 64;

const TEXT_FIELDS = [
  'username',
  'tokenName',
  'channelName',
  'modelName',
  'group',
  'ip',
  'requestId',
  'content',
] as const;

/**
 * Throws a TypeError for a record the database would refuse (a fraction in an integer column, a
 * number out of range, a missing text): such a record must fail alone, in the caller.
 */
export function checkRecord(record: ConsumeRecord | ErrorRecord): void {
  int32('userId', record.userId);
  int32('tokenId', record.tokenId);
  int32('channelId', record.channelId);
  int32('useTimeSeconds', record.useTimeSeconds);
  if (record.promptTokens !== undefined) int32('promptTokens', record.promptTokens);
  if (record.completionTokens !== undefined) int32('completionTokens', record.completionTokens);
  if (record.at !== undefined) quota('at', record.at);
  if ('quota' in record) {
    quota('quota', record.quota);
    const c = record.counters;
    if (c?.userQuota !== undefined) quota('counters.userQuota', c.userQuota);
    if (c?.tokenQuota !== undefined) quota('counters.tokenQuota', c.tokenQuota);
    if (c?.channelQuota !== undefined) quota('counters.channelQuota', c.channelQuota);
    if (c?.requests !== undefined) int32('counters.requests', c.requests);
    const type = record.clientType as unknown;
    if (type !== undefined && (typeof type !== 'string' || type === '' || type.length > CLIENT_TYPE_MAX)) {
      throw new TypeError(`usage record: clientType must be a string of 1 to ${CLIENT_TYPE_MAX} characters`);
    }
  }
  for (const field of TEXT_FIELDS) {
    if (typeof record[field] !== 'string') throw new TypeError(`usage record: ${field} must be a string`);
  }
  if (typeof record.isStream !== 'boolean') throw new TypeError('usage record: isStream must be a boolean');
  const other = record.other as unknown;
  if (typeof other !== 'string' && (other === null || typeof other !== 'object')) {
    throw new TypeError('usage record: other must be an object or a JSON string');
  }
}

/** Postgres text cannot hold NUL; an upstream error message may contain one. */
export function pgText(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}
