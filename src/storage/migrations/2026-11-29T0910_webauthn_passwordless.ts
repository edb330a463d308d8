import type { Kysely } from 'kysely';

// Passwordless security keys (Keycloak's webauthn-passwordless credentials: a discoverable credential,
// the only factor): a flag on the key, and the realm's webAuthnPolicyPasswordless* settings as JSON
// ('{}': Keycloak's defaults). Additive only; frozen once landed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webauthn_credentials').addColumn('passwordless', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('realms').addColumn('webauthn_passwordless_policy', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('webauthn_passwordless_policy').execute();
  await db.schema.alterTable('webauthn_credentials').dropColumn('passwordless').execute();
}
