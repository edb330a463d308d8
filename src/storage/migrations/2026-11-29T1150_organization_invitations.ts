import type { Kysely } from 'kysely';

// Keycloak 26's organization invitations (src/storage/repos/invitations.ts): a mailed link that makes its
// holder a member. Only the SHA-256 of the link's secret is kept (secret_hash, unique); user_id names the
// existing user invited (null: a registration link for a new one). A used or deleted invitation is gone;
// an expired one stays, listed EXPIRED, until the collector deletes it. Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organization_invitations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('organization_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('email', 'varchar(320)', (c) => c.notNull())
    .addColumn('first_name', 'varchar(255)')
    .addColumn('last_name', 'varchar(255)')
    .addColumn('user_id', 'varchar(64)')
    .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('organization_invitations_org_email').on('organization_invitations').columns(['organization_id', 'email']).execute();
  await db.schema.createIndex('organization_invitations_expiry').on('organization_invitations').columns(['expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('organization_invitations').execute();
}
