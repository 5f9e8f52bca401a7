import type { Selectable } from 'kysely';
import type { ChannelsTable } from '../../store/database.ts';
import { readChannelInfo } from './keys.ts';

export type ChannelRow = Selectable<ChannelsTable>;

/**
 * A channel as the API shows it (new-api's shape). The key is never answered: `key` is always empty,
 * and fields are listed one by one so that a secret column added later cannot leak by default.
 * JSON-valued columns are answered as JSON text, "" when unset (never null): new-api's front end
 * sends back what it was given, and reads these as strings.
 */
export function channelView(row: ChannelRow) {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    key: '',
    openai_organization: row.openai_organization,
    test_model: row.test_model,
    status: row.status,
    weight: row.weight,
    priority: row.priority,
    created_time: row.created_time,
    test_time: row.test_time,
    response_time: row.response_time,
    base_url: row.base_url ?? '',
    other: row.other,
    balance: row.balance,
    balance_updated_time: row.balance_updated_time,
    models: row.models,
    group: row.group,
    used_quota: row.used_quota,
    model_mapping: row.model_mapping ?? '',
    status_code_mapping: row.status_code_mapping ?? '',
    auto_ban: row.auto_ban,
    other_info: row.other_info,
    tag: row.tag,
    setting: row.setting ?? '',
    settings: row.settings ?? '',
    param_override: row.param_override ?? '',
    header_override: row.header_override ?? '',
    channel_info: readChannelInfo(row.channel_info),
    max_input_tokens: row.max_input_tokens,
    remark: row.remark,
    managed_by: row.managed_by,
    managed_namespace: row.managed_namespace,
    managed_name: row.managed_name,
  };
}

export type ChannelView = ReturnType<typeof channelView>;
