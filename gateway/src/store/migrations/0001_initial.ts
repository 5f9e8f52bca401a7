import { type CreateTableBuilder, type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** The baseline: no older code exists for it to break. */
export const compatibility = 'expand';

function managed<T extends string>(table: CreateTableBuilder<T>) {
  return table
    .addColumn('managed_by', 'text')
    .addColumn('managed_namespace', 'text')
    .addColumn('managed_name', 'text')
    .addColumn('managed_uid', 'text');
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('setups')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('initialized_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('password', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('role', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('github_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('oidc_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('wechat_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('telegram_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('linux_do_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('access_token_hmac', 'text', (c) => c.unique())
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('used_quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('request_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('group', 'text', (c) => c.notNull().defaultTo('default'))
    .addColumn('aff_code', 'text', (c) => c.unique())
    .addColumn('aff_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('aff_quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('aff_history_quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('inviter_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('setting', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('remark', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_login_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_at', 'bigint')
    .execute();
  // A username is unique among live accounts; a deregistered one may be taken again.
  await db.schema
    .createIndex('users_username_live')
    .on('users')
    .column('username')
    .unique()
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema.createIndex('users_email').on('users').column('email').execute();
  await db.schema.createIndex('users_group').on('users').column('group').execute();
  for (const provider of ['github_id', 'oidc_id', 'wechat_id', 'telegram_id', 'linux_do_id']) {
    await db.schema.createIndex(`users_${provider}`).on('users').column(provider).execute();
  }

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('user_agent', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('key_hmac', 'text', (c) => c.notNull().unique())
    .addColumn('key_encrypted', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('accessed_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('expired_time', 'bigint', (c) => c.notNull().defaultTo(-1))
    .addColumn('remain_quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('unlimited_quota', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('used_quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('model_limits_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('model_limits', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('allow_ips', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('cross_group_retry', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('deleted_at', 'bigint')
    .$call(managed)
    .execute();
  await db.schema.createIndex('tokens_user_name').on('tokens').columns(['user_id', 'name']).execute();

  await db.schema
    .createTable('channels')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_encrypted', 'text', (c) => c.notNull())
    .addColumn('openai_organization', 'text')
    .addColumn('test_model', 'text')
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('priority', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('test_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('response_time', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('base_url', 'text')
    .addColumn('other', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('balance', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('balance_updated_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('models', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('group', 'text', (c) => c.notNull().defaultTo('default'))
    .addColumn('used_quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('model_mapping', 'text')
    .addColumn('status_code_mapping', 'text')
    .addColumn('auto_ban', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('other_info', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('tag', 'text')
    .addColumn('setting', 'text')
    .addColumn('settings', 'text')
    .addColumn('param_override', 'text')
    .addColumn('header_override', 'text')
    .addColumn('channel_info', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('max_input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('remark', 'text', (c) => c.notNull().defaultTo(''))
    .$call(managed)
    .execute();
  await db.schema.createIndex('channels_tag').on('channels').column('tag').execute();
  await db.schema.createIndex('channels_name').on('channels').column('name').execute();
  await db.schema
    .createIndex('channels_managed')
    .on('channels')
    .columns(['managed_namespace', 'managed_name'])
    .unique()
    .execute();

  await db.schema
    .createTable('abilities')
    .addColumn('group', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('priority', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('weight', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tag', 'text')
    .addPrimaryKeyConstraint('abilities_pk', ['group', 'model', 'channel_id'])
    .execute();
  await db.schema.createIndex('abilities_channel').on('abilities').column('channel_id').execute();
  await db.schema.createIndex('abilities_model').on('abilities').column('model').execute();

  await db.schema
    .createTable('options')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .$call(managed)
    .execute();

  await db.schema
    .createTable('model_prices')
    .addColumn('model', 'text', (c) => c.primaryKey())
    .addColumn('quota_type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('model_ratio', 'double precision')
    .addColumn('completion_ratio', 'double precision')
    .addColumn('cache_ratio', 'double precision')
    .addColumn('cache_creation_ratio', 'double precision')
    .addColumn('model_price', 'double precision')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .$call(managed)
    .execute();

  await db.schema
    .createTable('groups')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('ratio', 'double precision', (c) => c.notNull().defaultTo(1))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('selectable', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('user_group_ratios', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .$call(managed)
    .execute();

  await db.schema
    .createTable('redemptions')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(100))
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('redeemed_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('used_user_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expired_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('redemptions_name').on('redemptions').column('name').execute();

  await db.schema
    .createTable('logs')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('type', 'integer', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('username', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('token_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('model_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('use_time', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_stream', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('channel_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('channel_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('token_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('request_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('other', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  // Every list filter of the log screens, each paired with time so pages come out of the index in order.
  await db.schema.createIndex('logs_created').on('logs').columns(['created_at', 'id']).execute();
  for (const column of ['user_id', 'username', 'token_id', 'token_name', 'model_name', 'channel_id', 'type', 'group']) {
    await db.schema.createIndex(`logs_${column}_created`).on('logs').columns([column, 'created_at', 'id']).execute();
  }

  await db.schema
    .createTable('quota_data')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('model_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('token_used', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('quota_data_bucket', ['user_id', 'model_name', 'created_at'])
    .execute();
  await db.schema.createIndex('quota_data_created').on('quota_data').column('created_at').execute();

  await db.schema
    .createTable('midjourneys')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('code', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('mj_id', 'text', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('prompt_en', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('state', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('submit_time', 'bigint', (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('finish_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('image_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('video_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('video_urls', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('progress', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('fail_reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('channel_id', 'integer', (c) => c.notNull())
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('buttons', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .createIndex('midjourneys_user_submit')
    .on('midjourneys')
    .columns(['user_id', 'submit_time'])
    .execute();
  await db.schema.createIndex('midjourneys_submit').on('midjourneys').column('submit_time').execute();
  await db.schema.createIndex('midjourneys_mj_id').on('midjourneys').column('mj_id').execute();
  await db.schema.createIndex('midjourneys_channel').on('midjourneys').columns(['channel_id', 'submit_time']).execute();
  await db.schema.createIndex('midjourneys_status').on('midjourneys').column('status').execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('token_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('channel_id', 'integer', (c) => c.notNull())
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('fail_reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('submit_time', 'bigint', (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('finish_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('progress', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('data', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('private_data', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('tasks_user_submit').on('tasks').columns(['user_id', 'submit_time']).execute();
  await db.schema.createIndex('tasks_submit').on('tasks').column('submit_time').execute();
  await db.schema.createIndex('tasks_task_id').on('tasks').column('task_id').execute();
  await db.schema.createIndex('tasks_channel').on('tasks').columns(['channel_id', 'submit_time']).execute();
  await db.schema.createIndex('tasks_status').on('tasks').column('status').execute();

  await db.schema
    .createTable('top_ups')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('money', 'double precision', (c) => c.notNull())
    .addColumn('trade_no', 'text', (c) => c.notNull().unique())
    .addColumn('payment_method', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('create_time', 'bigint', (c) => c.notNull())
    .addColumn('complete_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('top_ups_user').on('top_ups').columns(['user_id', 'create_time']).execute();

  await db.schema
    .createTable('quota_leases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_type', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('quota_leases_expires').on('quota_leases').column('expires_at').execute();
  await db.schema
    .createIndex('quota_leases_account')
    .on('quota_leases')
    .columns(['account_type', 'account_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  const tables = [
    'quota_leases',
    'top_ups',
    'tasks',
    'midjourneys',
    'quota_data',
    'logs',
    'redemptions',
    'groups',
    'model_prices',
    'options',
    'abilities',
    'channels',
    'tokens',
    'sessions',
    'users',
    'setups',
  ];
  for (const table of tables) await db.schema.dropTable(table).ifExists().execute();
}
