import type { FastifyInstance } from 'fastify';
import {
  CHANNEL_STATUS,
  CHANNEL_TYPES,
  type ChannelCreateInput,
  type ChannelFilters,
  type ChannelService,
  type ChannelType,
  type ChannelUpdateInput,
  type ChannelView,
  type ChannelWarning,
  type TagEdit,
} from '../domain/channels/index.ts';
import { requestLanguage } from '../http/errors.ts';
import type { authGuards } from './auth.ts';
import { ok, say } from './envelope.ts';
import { type PagingInput, pageOf, paging, pagingQuery } from './paging.ts';
import { idParams, text } from './schemas.ts';

export interface ChannelRouteDeps {
  guards: ReturnType<typeof authGuards>;
  channels: ChannelService;
}

const tags = ['channel'];
/** A JSON object field: its text, or the object itself; "", "null", "{}" and {} all mean none. */
const jsonObject = (description: string) =>
  ({ type: ['string', 'object'], maxLength: 65_536, description: `${description}; empty means none` }) as const;
const nameList = (description: string) =>
  ({ type: ['string', 'array'], items: { type: 'string', maxLength: 512 }, maxLength: 200_000, description }) as const;

/**
 * Every channel field the API takes (spec doc 2 §3); absent fields (and `null`, which new-api's clients
 * send for "no value") keep their value on update; an empty string clears a text field.
 */
export const channelFields = {
  type: { type: 'integer', description: 'Channel type id (reference §6); default 1 (OpenAI)' },
  name: text('Display name'),
  key: {
    type: 'string',
    maxLength: 1_000_000,
    description: 'Key(s): one per line or a JSON array. Write-only: answers always carry an empty key',
  },
  openai_organization: text('OpenAI-Organization header value', 512),
  test_model: text('Model used by channel tests', 512),
  status: { type: 'integer', enum: [1, 2, 3], description: '1 enabled, 2 disabled, 3 auto-disabled' },
  weight: { type: 'number', description: 'Non-negative integer: weight inside a priority tier' },
  priority: { type: 'number', description: 'Integer: higher tiers are tried first' },
  base_url: text('Upstream base URL; empty means the type default; a trailing slash is stripped', 2048),
  other: text('Type-specific setting (e.g. Spark version, default v2.1 for type 18)'),
  models: nameList('Models served: comma string (or a list)'),
  group: text('Groups served: comma string', 16_384),
  groups: { type: 'array', items: { type: 'string', maxLength: 512 }, description: 'Groups served, as a list' },
  model_mapping: jsonObject('JSON object {"requested model": "upstream model"}'),
  status_code_mapping: jsonObject('JSON object {"upstream status": "reported status"}'),
  auto_ban: { type: 'integer', enum: [0, 1], description: '1: may be auto-disabled on upstream errors' },
  tag: text('Free-text tag grouping channels; empty removes it', 512),
  setting: jsonObject('JSON object: channel settings (proxy, system prompt, ...)'),
  settings: jsonObject('JSON object: other type-specific settings'),
  param_override: jsonObject('JSON object merged into or operating on the request body'),
  header_override: jsonObject('JSON object of headers to set on upstream requests'),
  max_input_tokens: { type: 'integer', minimum: 0, description: '0 means no limit' },
  remark: text('Administrator note'),
} as const;

const multiKeyMode = {
  type: 'string',
  enum: ['random', 'polling'],
  description: 'How a channel with several keys picks one',
} as const;
const createMode = {
  type: 'string',
  enum: ['single', 'batch', 'multi_to_single'],
  description: 'single/multi_to_single: one channel holding every key line; batch: one channel per key line',
} as const;

const idSchema = idParams('Channel id');
const tagBody = {
  type: 'object',
  required: ['tag'],
  properties: { tag: text('Tag', 512) },
} as const;
const listQuery = {
  type: 'object',
  properties: {
    ...pagingQuery,
    id_sort: { type: 'boolean', description: 'Order by id (newest first) instead of priority' },
    tag_mode: { type: 'boolean', description: 'Page over tags; each tag answers all its channels together' },
    status: text('enabled, disabled (status 2 or 3), or a status number', 16),
    type: { type: 'integer', description: 'Only this channel type' },
  },
} as const;
const searchQuery = {
  type: 'object',
  properties: {
    ...listQuery.properties,
    keyword: text('Id, or part of the name, base URL or tag (never the key)', 512),
    group: text('A group the channel serves', 512),
    model: text('Part of a model name the channel serves', 512),
  },
} as const;

type ListQuery = PagingInput & { id_sort?: boolean; tag_mode?: boolean; status?: string; type?: number };
type SearchQuery = ListQuery & { keyword?: string; group?: string; model?: string };

function statusFilter(status: string | undefined): ChannelFilters['status'] {
  const value = status?.trim().toLowerCase();
  if (value === 'enabled' || value === '1') return 'enabled';
  if (value === 'disabled' || value === '0') return 'disabled';
  if (value === '2' || value === '3') return Number(value);
  return undefined;
}

const withWarnings = (view: ChannelView, warnings: ChannelWarning[]) => ({ ...view, warnings });

/** /api/channel/*: channel management for administrators (spec doc 2 §7 "Channels", reference §2.4). */
export function channelRoutes(app: FastifyInstance, { guards, channels }: ChannelRouteDeps): void {
  // Guards run before validation, so a user without the role learns nothing about the input schema.
  const admin = { preValidation: guards.admin };
  const root = { preValidation: guards.root };

  const page = async (query: SearchQuery) => {
    const { page: p, pageSize, offset } = paging(query);
    const result = await channels.page({
      keyword: query.keyword,
      group: query.group,
      model: query.model,
      status: statusFilter(query.status),
      type: query.type,
      idSort: query.id_sort,
      tagMode: query.tag_mode,
      offset,
      limit: pageSize,
    });
    return ok({ ...pageOf(result.items, result.total, p, pageSize), type_counts: result.type_counts });
  };
  app.get<{ Querystring: ListQuery }>(
    '/channel/',
    { ...admin, schema: { tags, summary: 'List channels', querystring: listQuery } },
    async (request) => page(request.query),
  );
  app.get<{ Querystring: SearchQuery }>(
    '/channel/search',
    { ...admin, schema: { tags, summary: 'Search channels', querystring: searchQuery } },
    async (request) => page(request.query),
  );

  app.get(
    '/channel/types',
    {
      ...admin,
      schema: {
        tags,
        summary:
          'Tollgate: the channel-type registry (not in new-api): every type, whether it is offered, and why not when not',
      },
    },
    async () => ok(CHANNEL_TYPES.map(channelTypeView)),
  );
  app.get(
    '/channel/models',
    { ...admin, schema: { tags, summary: 'Models known per channel type, each once: [{id, owned_by}]' } },
    async () => ok(channels.knownModels()),
  );
  app.get(
    '/channel/models_enabled',
    { ...admin, schema: { tags, summary: 'Distinct models of enabled channels' } },
    async () => ok(await channels.enabledModels()),
  );
  app.get<{ Querystring: { tag: string } }>(
    '/channel/tag/models',
    {
      ...admin,
      schema: { tags, summary: 'The longest model list among a tag’s channels', querystring: tagBody },
    },
    async (request) => ok(await channels.tagModels(request.query.tag)),
  );

  app.get<{ Params: { id: number } }>(
    '/channel/fetch_models/:id',
    { ...admin, schema: { tags, summary: 'Ask a saved channel’s upstream for its models', params: idSchema } },
    async (request) => ok(await channels.fetchModelsOf(request.params.id)),
  );
  app.post<{ Body: { base_url?: string; type?: number; key?: string; other?: string } }>(
    '/channel/fetch_models',
    {
      ...root,
      schema: {
        tags,
        summary: 'Ask an upstream for its models, for a channel not saved yet (root)',
        body: {
          type: 'object',
          properties: {
            base_url: text('Base URL; empty means the type default', 2048),
            type: channelFields.type,
            key: channelFields.key,
            other: channelFields.other,
          },
        },
      },
    },
    async (request) => ok(await channels.fetchModelsFor(request.body ?? {})),
  );

  app.get<{ Params: { id: number } }>(
    '/channel/test_upstream/:id',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Upstream detection: the groups and kinds of client that reached a channel through the relay',
        description:
          'Observed from real traffic (channel tests are not counted); the client type is told from the ' +
          'User-Agent. Answers {groups: [{group, first_seen, last_seen, client_types: [{client_type, count, ' +
          'first_seen, last_seen}]}]}: groups latest first, client types most used first, times in Unix seconds.',
        params: idSchema,
      },
    },
    async (request) => ok(await channels.upstreamObservations(request.params.id)),
  );

  // Upstream balances: new-api answers `balance` beside success and message; `data` holds it too.
  for (const path of ['/channel/update_balance/:id', '/channel/update_balance/:id/']) {
    app.get<{ Params: { id: number } }>(
      path,
      {
        ...admin,
        schema: {
          tags,
          summary: 'Ask a channel’s upstream for its account balance (US dollars) and store it',
          description:
            'Answers {success, message, balance, data: {id, balance, balance_updated_time}}. Types without a ' +
            'balance API answer CHANNEL_BALANCE_UNSUPPORTED; upstream failures answer UPSTREAM_* (502).',
          params: idSchema,
        },
      },
      async (request) => {
        const { id } = request.params;
        const result = await channels.refreshBalance(id);
        return { ...ok({ id, ...result }), balance: result.balance };
      },
    );
  }
  app.get(
    '/channel/update_balance',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Refresh the balance of every enabled channel',
        description:
          'Channels whose type has no balance API are skipped; a failing upstream does not stop the rest. ' +
          'Answers {total, updated, skipped, failed: [{id, name, code, message}]}.',
      },
    },
    async (request) => {
      const summary = await channels.refreshAllBalances();
      const language = requestLanguage(request);
      const failed = summary.failed.map(({ id, name, error }) => ({
        id,
        name,
        code: error.code,
        message: error.localized(language),
      }));
      return ok(
        { ...summary, failed },
        say(request, {
          zh: `已更新 ${summary.updated} 个渠道的余额，失败 ${failed.length} 个，跳过 ${summary.skipped} 个`,
          en: `Updated the balance of ${summary.updated} channels; ${failed.length} failed, ${summary.skipped} skipped`,
        }),
      );
    },
  );

  app.get<{ Params: { id: number } }>(
    '/channel/:id',
    { ...admin, schema: { tags, summary: 'One channel (the key is never answered)', params: idSchema } },
    async (request) => ok(await channels.get(request.params.id)),
  );

  app.post<{ Body: ChannelCreateInput & { channel?: ChannelCreateInput } }>(
    '/channel/',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Create channels (several with mode batch)',
        description:
          'Channel fields at the top level, or new-api’s {mode, multi_key_mode, channel: {...}}. ' +
          'Answers the first channel plus `ids` (every created id) and `warnings` (e.g. base_url_ends_with_v1).',
        body: {
          type: 'object',
          properties: {
            ...channelFields,
            mode: createMode,
            multi_key_mode: multiKeyMode,
            channel: { type: 'object', properties: channelFields, description: 'new-api’s wrapped form' },
          },
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const input: ChannelCreateInput = body.channel
        ? { ...body.channel, mode: body.mode, multi_key_mode: body.multi_key_mode }
        : body;
      const { channels: created, warnings } = await channels.create(input);
      const first = created[0] as ChannelView;
      return ok(
        { ...withWarnings(first, warnings), ids: created.map((c) => c.id) },
        say(request, {
          zh: created.length > 1 ? `已创建 ${created.length} 个渠道` : '渠道创建成功',
          en: created.length > 1 ? `Created ${created.length} channels` : 'Channel created',
        }),
      );
    },
  );

  app.put<{ Body: ChannelUpdateInput }>(
    '/channel/',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Update a channel: every field, or just {id, status}, {id, priority}, {id, weight}',
        description: 'An empty key keeps the stored keys. Answers the channel (with its status) and `warnings`.',
        body: {
          type: 'object',
          required: ['id'],
          properties: {
            id: idSchema.properties.id,
            ...channelFields,
            key_mode: {
              type: 'string',
              enum: ['replace', 'append'],
              description: 'Whether a non-empty key replaces the stored keys or is added to them',
            },
            multi_key_mode: multiKeyMode,
          },
        },
      },
    },
    async (request) => {
      const { channel, warnings } = await channels.update(request.body);
      return ok(withWarnings(channel, warnings), say(request, { zh: '渠道更新成功', en: 'Channel updated' }));
    },
  );

  app.post<{ Params: { id: number }; Querystring: { suffix?: string; reset_balance?: boolean } }>(
    '/channel/copy/:id',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Copy a channel, key included (name + suffix, default "_复制"; balance reset by default)',
        params: idSchema,
        querystring: {
          type: 'object',
          properties: {
            suffix: text('Appended to the name; default "_复制"', 64),
            reset_balance: { type: 'boolean', description: 'Reset balance and used quota (default true)' },
          },
        },
      },
    },
    async (request) => {
      const copy = await channels.copy(request.params.id, {
        suffix: request.query.suffix,
        resetBalance: request.query.reset_balance,
      });
      return ok(copy, say(request, { zh: '渠道复制成功', en: 'Channel copied' }));
    },
  );

  app.delete(
    '/channel/disabled',
    {
      ...admin,
      preHandler: guards.stepUp,
      schema: { tags, summary: 'Delete every disabled channel (status 2 and 3); answers the count' },
    },
    async (request) => {
      const count = await channels.deleteDisabled();
      return ok(count, say(request, { zh: `已删除 ${count} 个禁用渠道`, en: `Deleted ${count} disabled channels` }));
    },
  );

  for (const path of ['/channel/:id', '/channel/:id/']) {
    app.delete<{ Params: { id: number } }>(
      path,
      { ...admin, preHandler: guards.stepUp, schema: { tags, summary: 'Delete a channel', params: idSchema } },
      async (request) => {
        await channels.delete(request.params.id);
        return ok(undefined, say(request, { zh: '渠道删除成功', en: 'Channel deleted' }));
      },
    );
  }

  const idsBody = {
    type: 'object',
    required: ['ids'],
    properties: { ids: { type: 'array', items: { type: 'integer', minimum: 1 }, maxItems: 10_000 } },
  } as const;
  app.post<{ Body: { ids: number[] } }>(
    '/channel/batch',
    {
      ...admin,
      preHandler: guards.stepUp,
      schema: { tags, summary: 'Delete several channels; answers the count', body: idsBody },
    },
    async (request) => {
      const count = await channels.deleteMany(request.body.ids);
      return ok(count, say(request, { zh: `已删除 ${count} 个渠道`, en: `Deleted ${count} channels` }));
    },
  );

  app.post(
    '/channel/fix',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Rebuild the abilities table from every channel; answers {success, fails} channel counts',
        description: 'One transaction rebuilds every channel or none, so `fails` is always 0 when it succeeds.',
      },
    },
    async (request) => {
      const count = await channels.fixAbilities();
      // new-api's front ends show data.success and data.fails.
      return ok(
        { success: count, fails: 0 },
        say(request, { zh: `已修复 ${count} 个渠道`, en: `Fixed ${count} channels` }),
      );
    },
  );

  app.post<{ Body: { ids: number[]; tag: string | null } }>(
    '/channel/batch/tag',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Set the tag of several channels (null clears it); answers the count',
        body: {
          type: 'object',
          required: ['ids', 'tag'],
          // new-api's batch tag: here, and only here, null is a value (it clears the tag).
          properties: {
            ids: idsBody.properties.ids,
            tag: { ...text('Tag; null clears it', 512), type: ['string', 'null'] },
          },
        },
      },
    },
    async (request) => {
      const count = await channels.setTag(request.body.ids, request.body.tag);
      return ok(count, say(request, { zh: `已为 ${count} 个渠道设置标签`, en: `Tagged ${count} channels` }));
    },
  );

  app.put<{ Body: TagEdit }>(
    '/channel/tag',
    {
      ...admin,
      schema: {
        tags,
        summary: 'Edit every channel of a tag; empty fields are not changed; answers the count',
        body: {
          type: 'object',
          required: ['tag'],
          properties: {
            tag: text('The tag to edit', 512),
            new_tag: text('New tag name; an empty string dissolves the tag', 512),
            model_mapping: channelFields.model_mapping,
            models: nameList('Models for every channel of the tag'),
            groups: nameList('Groups for every channel of the tag'),
            priority: { type: 'number', description: 'Integer priority for every channel' },
            weight: { type: 'number', description: 'Non-negative integer weight for every channel' },
            param_override: channelFields.param_override,
            header_override: channelFields.header_override,
          },
        },
      },
    },
    async (request) => {
      const count = await channels.editTag(request.body);
      return ok(count, say(request, { zh: '标签更新成功', en: 'Tag updated' }));
    },
  );

  for (const [action, status] of [
    ['enabled', CHANNEL_STATUS.enabled],
    ['disabled', CHANNEL_STATUS.disabled],
  ] as const) {
    app.post<{ Body: { tag: string } }>(
      `/channel/tag/${action}`,
      { ...admin, schema: { tags, summary: `Set every channel of a tag ${action}; answers the count`, body: tagBody } },
      async (request) => {
        const count = await channels.setTagStatus(request.body.tag, status);
        return ok(count, say(request, { zh: '操作成功完成！', en: 'Done!' }));
      },
    );
  }
}

/**
 * A registry row as the console reads it: offered types fill the type picker and the form's hints;
 * the others are there so stored rows of them are named (and marked unsupported) in lists.
 */
function channelTypeView(type: ChannelType) {
  return {
    id: type.id,
    name: type.name,
    offered: type.offered,
    reason: type.reason,
    protocol: type.protocol,
    base_url: type.baseUrl,
    key: { hint: type.key.hint, separator: type.key.separator ?? null, parts: type.key.parts ?? null },
    other: type.other
      ? {
          label: type.other.label,
          hint: type.other.hint,
          default: type.other.default ?? null,
          required: type.other.required ?? false,
          choices: type.other.choices ?? null,
        }
      : null,
    endpoints: type.endpoints,
    testable: type.testable,
    balance: type.offered && type.balance !== undefined,
    model_listing: type.offered && type.listing !== 'none',
  };
}
