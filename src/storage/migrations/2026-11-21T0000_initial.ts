import type { Kysely } from 'kysely';

// Frozen once landed: later changes go into a new migration file.
// Integer timestamps use bigint so they outlive 2038 on PostgreSQL (SQLite integers are 64-bit anyway).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('realms')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('display_name', 'text')
    .addColumn('code_lifetime', 'integer', (c) => c.notNull())
    .addColumn('access_token_lifetime', 'integer', (c) => c.notNull())
    .addColumn('refresh_idle_lifetime', 'integer', (c) => c.notNull())
    .addColumn('refresh_max_lifetime', 'integer', (c) => c.notNull())
    .addColumn('sso_session_lifetime', 'integer', (c) => c.notNull())
    .addColumn('access_token_audience', 'text', (c) => c.notNull())
    .addColumn('signing_alg', 'varchar(16)', (c) => c.notNull())
    .addColumn('not_before', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('clients')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull().references('realms.id').onDelete('cascade'))
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('secret_hash', 'text')
    .addColumn('public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('clients_pk', ['realm_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull().references('realms.id').onDelete('cascade'))
    .addColumn('username', 'varchar(255)', (c) => c.notNull())
    .addColumn('email', 'varchar(320)')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('users_realm_username', ['realm_id', 'username'])
    .execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull().references('realms.id').onDelete('cascade'))
    .addColumn('alias', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('organizations_realm_alias', ['realm_id', 'alias'])
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('memberships_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('memberships_user').on('memberships').column('user_id').execute();

  await db.schema
    .createTable('scopes')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull().references('realms.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('consent_text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('scopes_pk', ['realm_id', 'name'])
    .execute();

  await db.schema
    .createTable('consents')
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pk', ['user_id', 'realm_id', 'client_id', 'organization_id'])
    .execute();

  await db.schema
    .createTable('browser_sessions')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();

  await db.schema
    .createTable('interactions')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('browser_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('csrf_token', 'varchar(64)', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)')
    .addColumn('session_id', 'varchar(36)')
    .addColumn('consented', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('organization_id', 'varchar(36)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('interactions_expires').on('interactions').column('expires_at').execute();

  await db.schema
    .createTable('authorization_codes')
    .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('session_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'varchar(128)')
    .addColumn('code_challenge_method', 'varchar(16)')
    .addColumn('nonce', 'text')
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('chain_id', 'varchar(36)')
    .execute();
  await db.schema.createIndex('authorization_codes_expires').on('authorization_codes').column('expires_at').execute();

  await db.schema
    .createTable('refresh_chains')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('client_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('session_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('auth_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('max_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('refresh_chains_user').on('refresh_chains').columns(['realm_id', 'user_id']).execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('chain_id', 'varchar(36)', (c) => c.notNull().references('refresh_chains.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('refresh_tokens_chain').on('refresh_tokens').column('chain_id').execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull().references('realms.id').onDelete('cascade'))
    .addColumn('alg', 'varchar(16)', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();
  await db.schema.createIndex('signing_keys_realm').on('signing_keys').column('realm_id').execute();

  await db.schema
    .createTable('meta')
    .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('the initial migration cannot be reverted');
}
