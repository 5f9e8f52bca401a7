import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** New tables and a defaulted column: older gateways neither read nor need them. */
export const compatibility = 'expand';

/**
 * Single sign-on with any provider (issue 19): OAuth 2 / OIDC providers configured by the administrator
 * (client secret encrypted by the keyring), the users bound to them, and Discord's account id beside the
 * other built-in providers' columns. A provider account belongs to one user, and a user has at most one
 * account per provider.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('custom_oauth_providers')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'varchar(64)', (c) => c.notNull())
    .addColumn('slug', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('icon', 'varchar(128)', (c) => c.notNull().defaultTo(''))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('client_id', 'varchar(256)', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('authorization_endpoint', 'varchar(512)', (c) => c.notNull())
    .addColumn('token_endpoint', 'varchar(512)', (c) => c.notNull())
    .addColumn('user_info_endpoint', 'varchar(512)', (c) => c.notNull())
    .addColumn('scopes', 'varchar(256)', (c) => c.notNull().defaultTo('openid profile email'))
    .addColumn('user_id_field', 'varchar(128)', (c) => c.notNull().defaultTo('sub'))
    .addColumn('username_field', 'varchar(128)', (c) => c.notNull().defaultTo('preferred_username'))
    .addColumn('display_name_field', 'varchar(128)', (c) => c.notNull().defaultTo('name'))
    .addColumn('email_field', 'varchar(128)', (c) => c.notNull().defaultTo('email'))
    .addColumn('well_known', 'varchar(512)', (c) => c.notNull().defaultTo(''))
    .addColumn('auth_style', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('user_oauth_bindings')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider_id', 'integer', (c) => c.notNull().references('custom_oauth_providers.id').onDelete('cascade'))
    .addColumn('provider_user_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('user_oauth_bindings_provider_account', ['provider_id', 'provider_user_id'])
    .addUniqueConstraint('user_oauth_bindings_user_provider', ['user_id', 'provider_id'])
    .execute();
  await db.schema
    .alterTable('users')
    .addColumn('discord_id', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  // One live user per Discord account; deregistered users keep theirs (no second round of sign-up grants).
  await db.schema
    .createIndex('users_discord_id_live')
    .on('users')
    .column('discord_id')
    .unique()
    .where(sql<boolean>`discord_id <> '' and deleted_at is null`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('users_discord_id_live').ifExists().execute();
  await db.schema.alterTable('users').dropColumn('discord_id').execute();
  await db.schema.dropTable('user_oauth_bindings').ifExists().execute();
  await db.schema.dropTable('custom_oauth_providers').ifExists().execute();
}
