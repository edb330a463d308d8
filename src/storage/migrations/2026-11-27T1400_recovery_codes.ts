import type { Kysely } from 'kysely';

// Recovery codes: single-use codes a user with an authenticator app keeps on paper, to sign in when the
// phone is lost (Keycloak's recovery-authn-codes). Each stored only as a keyed hash
// (src/admin/operations/recovery-codes.ts); used_at is set once, by one conditional update. Additive only;
// frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('recovery_codes')
    .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('code_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('realm_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('recovery_codes').execute();
}
