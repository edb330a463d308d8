import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { ConflictError, type Realm, type Scope } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { toRealm } from './mappers.js';
import { webAuthnPolicyJson } from '../../admin/webauthn-policy.js';
import { deleteOwnedMappers } from './protocol-mappers.js';

export type RealmSettings = Omit<Realm, 'id' | 'createdAt' | 'displayName' | 'notBefore' | 'enabled' | 'defaultRoleId'>;

/** The scopes every new realm starts with, and the words the consent page uses for them. */
export const DEFAULT_SCOPES: readonly Scope[] = [
  { name: 'openid', consentText: 'Confirm who you are (your account identifier)' },
  { name: 'profile', consentText: 'See your name and username' },
  { name: 'email', consentText: 'See your email address' },
  { name: 'core_data', consentText: "Read and change your organization's core business data" },
  { name: 'exports', consentText: "Export data from your organization's account" },
  { name: 'offline_access', consentText: 'Keep this access when you are not signed in, until you revoke it' },
];

export class RealmRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: { id: string; displayName: string | null; settings: RealmSettings; now: number }): Promise<Realm> {
    const s = input.settings;
    try {
      await inTransaction(this.db, async (trx) => {
        await trx
          .insertInto('realms')
          .values({
            id: input.id,
            display_name: input.displayName,
            code_lifetime: s.codeLifetime,
            access_token_lifetime: s.accessTokenLifetime,
            refresh_idle_lifetime: s.refreshIdleLifetime,
            refresh_max_lifetime: s.refreshMaxLifetime,
            sso_session_lifetime: s.ssoSessionLifetime,
            access_token_audience: s.accessTokenAudience,
            signing_alg: s.signingAlg,
            not_before: 0,
            created_at: input.now,
            max_login_failures: s.maxLoginFailures,
            lockout_seconds: s.lockoutSeconds,
            max_lockout_seconds: s.maxLockoutSeconds,
            stored_event_types: JSON.stringify(s.storedEventTypes),
            refresh_grace_seconds: s.refreshGraceSeconds,
            refresh_grace_max: s.refreshGraceMax,
            access_token_format: s.accessTokenFormat,
            organization_required: s.organizationRequired ? 1 : 0,
            events_retention: s.eventsRetention,
            admin_events_retention: s.adminEventsRetention,
            smtp_server: JSON.stringify(s.smtpServer),
            smtp_password: s.smtpPassword,
            reset_password_allowed: s.resetPasswordAllowed ? 1 : 0,
            action_token_user_lifespan: s.actionTokenUserLifespan,
            action_token_admin_lifespan: s.actionTokenAdminLifespan,
            password_policy: s.passwordPolicy ?? '',
            login_with_email_allowed: s.loginWithEmailAllowed ? 1 : 0,
            duplicate_emails_allowed: s.duplicateEmailsAllowed ? 1 : 0,
            remember_me: s.rememberMe ? 1 : 0,
            sso_idle_remember_me: s.ssoIdleRememberMe,
            sso_max_remember_me: s.ssoMaxRememberMe,
            registration_allowed: s.registrationAllowed ? 1 : 0,
            registration_email_as_username: s.registrationEmailAsUsername ? 1 : 0,
            edit_username_allowed: s.editUsernameAllowed ? 1 : 0,
            broker_review_profile: s.brokerReviewProfile,
            verify_email: s.verifyEmail ? 1 : 0,
            par_request_uri_lifespan: s.parRequestUriLifespan,
            webauthn_policy: webAuthnPolicyJson(s.webAuthnPolicy),
            webauthn_passwordless_policy: webAuthnPolicyJson(s.webAuthnPasswordlessPolicy),
            required_actions: JSON.stringify(s.requiredActionSettings ?? {}),
            client_scope_defaults: s.clientScopeDefaults ? JSON.stringify(s.clientScopeDefaults) : null,
            internationalization_enabled: s.internationalizationEnabled ? 1 : 0,
            supported_locales: JSON.stringify(s.supportedLocales),
            default_locale: s.defaultLocale,
          })
          .execute();
        await trx
          .insertInto('scopes')
          .values(DEFAULT_SCOPES.map((sc) => ({ realm_id: input.id, name: sc.name, consent_text: sc.consentText, created_at: input.now })))
          .execute();
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`realm ${input.id} already exists`);
      throw err;
    }
    const realm = await this.get(input.id);
    if (!realm) throw new Error('realm vanished after insert');
    return realm;
  }

  async get(id: string): Promise<Realm | undefined> {
    const row = await this.db.selectFrom('realms').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRealm(row) : undefined;
  }

  async list(): Promise<Realm[]> {
    const rows = await this.db.selectFrom('realms').selectAll().orderBy('id').execute();
    return rows.map(toRealm);
  }

  async update(id: string, patch: Partial<RealmSettings> & { displayName?: string | null; notBefore?: number; enabled?: boolean; defaultRoleId?: string | null }): Promise<void> {
    const values: Record<string, string | number | null> = {};
    if (patch.displayName !== undefined) values.display_name = patch.displayName;
    if (patch.codeLifetime !== undefined) values.code_lifetime = patch.codeLifetime;
    if (patch.accessTokenLifetime !== undefined) values.access_token_lifetime = patch.accessTokenLifetime;
    if (patch.refreshIdleLifetime !== undefined) values.refresh_idle_lifetime = patch.refreshIdleLifetime;
    if (patch.refreshMaxLifetime !== undefined) values.refresh_max_lifetime = patch.refreshMaxLifetime;
    if (patch.ssoSessionLifetime !== undefined) values.sso_session_lifetime = patch.ssoSessionLifetime;
    if (patch.accessTokenAudience !== undefined) values.access_token_audience = patch.accessTokenAudience;
    if (patch.signingAlg !== undefined) values.signing_alg = patch.signingAlg;
    if (patch.accessTokenFormat !== undefined) values.access_token_format = patch.accessTokenFormat;
    if (patch.organizationRequired !== undefined) values.organization_required = patch.organizationRequired ? 1 : 0;
    if (patch.maxLoginFailures !== undefined) values.max_login_failures = patch.maxLoginFailures;
    if (patch.lockoutSeconds !== undefined) values.lockout_seconds = patch.lockoutSeconds;
    if (patch.maxLockoutSeconds !== undefined) values.max_lockout_seconds = patch.maxLockoutSeconds;
    if (patch.notBefore !== undefined) values.not_before = patch.notBefore;
    if (patch.enabled !== undefined) values.enabled = patch.enabled ? 1 : 0;
    if (patch.refreshGraceSeconds !== undefined) values.refresh_grace_seconds = patch.refreshGraceSeconds;
    if (patch.refreshGraceMax !== undefined) values.refresh_grace_max = patch.refreshGraceMax;
    if (patch.storedEventTypes !== undefined) values.stored_event_types = JSON.stringify(patch.storedEventTypes);
    if (patch.eventsRetention !== undefined) values.events_retention = patch.eventsRetention;
    if (patch.adminEventsRetention !== undefined) values.admin_events_retention = patch.adminEventsRetention;
    if (patch.smtpServer !== undefined) values.smtp_server = JSON.stringify(patch.smtpServer);
    if (patch.smtpPassword !== undefined) values.smtp_password = patch.smtpPassword;
    if (patch.resetPasswordAllowed !== undefined) values.reset_password_allowed = patch.resetPasswordAllowed ? 1 : 0;
    if (patch.actionTokenUserLifespan !== undefined) values.action_token_user_lifespan = patch.actionTokenUserLifespan;
    if (patch.actionTokenAdminLifespan !== undefined) values.action_token_admin_lifespan = patch.actionTokenAdminLifespan;
    if (patch.passwordPolicy !== undefined) values.password_policy = patch.passwordPolicy;
    if (patch.loginWithEmailAllowed !== undefined) values.login_with_email_allowed = patch.loginWithEmailAllowed ? 1 : 0;
    if (patch.duplicateEmailsAllowed !== undefined) values.duplicate_emails_allowed = patch.duplicateEmailsAllowed ? 1 : 0;
    if (patch.rememberMe !== undefined) values.remember_me = patch.rememberMe ? 1 : 0;
    if (patch.ssoIdleRememberMe !== undefined) values.sso_idle_remember_me = patch.ssoIdleRememberMe;
    if (patch.ssoMaxRememberMe !== undefined) values.sso_max_remember_me = patch.ssoMaxRememberMe;
    if (patch.registrationAllowed !== undefined) values.registration_allowed = patch.registrationAllowed ? 1 : 0;
    if (patch.registrationEmailAsUsername !== undefined) values.registration_email_as_username = patch.registrationEmailAsUsername ? 1 : 0;
    if (patch.editUsernameAllowed !== undefined) values.edit_username_allowed = patch.editUsernameAllowed ? 1 : 0;
    if (patch.brokerReviewProfile !== undefined) values.broker_review_profile = patch.brokerReviewProfile;
    if (patch.verifyEmail !== undefined) values.verify_email = patch.verifyEmail ? 1 : 0;
    if (patch.parRequestUriLifespan !== undefined) values.par_request_uri_lifespan = patch.parRequestUriLifespan;
    if (patch.webAuthnPolicy !== undefined) values.webauthn_policy = webAuthnPolicyJson(patch.webAuthnPolicy);
    if (patch.webAuthnPasswordlessPolicy !== undefined) values.webauthn_passwordless_policy = webAuthnPolicyJson(patch.webAuthnPasswordlessPolicy);
    if (patch.requiredActionSettings !== undefined) values.required_actions = JSON.stringify(patch.requiredActionSettings);
    if (patch.clientScopeDefaults !== undefined) values.client_scope_defaults = patch.clientScopeDefaults ? JSON.stringify(patch.clientScopeDefaults) : null;
    if (patch.defaultRoleId !== undefined) values.default_role_id = patch.defaultRoleId;
    if (patch.internationalizationEnabled !== undefined) values.internationalization_enabled = patch.internationalizationEnabled ? 1 : 0;
    if (patch.supportedLocales !== undefined) values.supported_locales = JSON.stringify(patch.supportedLocales);
    if (patch.defaultLocale !== undefined) values.default_locale = patch.defaultLocale;
    if (Object.keys(values).length === 0) return;
    await this.db.updateTable('realms').set(values).where('id', '=', id).execute();
  }

  /**
   * Deletes the realm and everything in it, in one transaction. Tables that hang off users, chains or
   * organizations are cleared through them; a branch adding a realm table adds it here.
   */
  async delete(id: string): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      const users = trx.selectFrom('users').select('id').where('realm_id', '=', id);
      const chains = trx.selectFrom('refresh_chains').select('id').where('realm_id', '=', id);
      const orgs = trx.selectFrom('organizations').select('id').where('realm_id', '=', id);
      await trx.deleteFrom('user_roles').where('user_id', 'in', users).execute();
      const groups = trx.selectFrom('groups').select('id').where('realm_id', '=', id);
      await trx.deleteFrom('group_members').where('group_id', 'in', groups).execute();
      await trx.deleteFrom('group_roles').where('group_id', 'in', groups).execute();
      await trx.deleteFrom('memberships').where('organization_id', 'in', orgs).execute();
      await trx.deleteFrom('refresh_tokens').where('chain_id', 'in', chains).execute();
      for (const table of [
        'refresh_chains',
        'authorization_codes',
        'device_codes',
        'interactions',
        'consents',
        'browser_sessions',
        'revoked_access_tokens',
        'login_failures',
        'signing_keys',
        'scopes',
        'protocol_mappers',
        'role_scope_mappings',
        'role_composites',
        'client_initial_access',
        'realm_localization',
        'user_attribute_values',
        'otp_credentials',
        'recovery_codes',
        'webauthn_credentials',
        'webauthn_challenges',
        'password_history',
        'federated_identities',
        'identity_provider_mappers',
        'identity_providers',
        'roles',
        'groups',
        'events',
        'admin_events',
        'clients',
        'users',
        'organization_domains',
        'organizations',
      ] as const) {
        await trx.deleteFrom(table).where('realm_id', '=', id).execute();
      }
      const r = await trx.deleteFrom('realms').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    });
  }

  /** Deletes the scope with its protocol mappers, in one transaction. */
  async deleteScope(realmId: string, name: string): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      await deleteOwnedMappers(trx, realmId, 'scope', name);
      await trx.deleteFrom('role_scope_mappings').where('realm_id', '=', realmId).where('owner_kind', '=', 'scope').where('owner', '=', name).execute();
      const r = await trx.deleteFrom('scopes').where('realm_id', '=', realmId).where('name', '=', name).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    });
  }

  async scopes(realmId: string): Promise<Scope[]> {
    const rows = await this.db.selectFrom('scopes').select(['name', 'consent_text']).where('realm_id', '=', realmId).orderBy('name').execute();
    return rows.map((r) => ({ name: r.name, consentText: r.consent_text }));
  }

  async upsertScope(realmId: string, scope: Scope, now: number): Promise<void> {
    await this.db
      .insertInto('scopes')
      .values({ realm_id: realmId, name: scope.name, consent_text: scope.consentText, created_at: now })
      .onConflict((oc) => oc.columns(['realm_id', 'name']).doUpdateSet({ consent_text: scope.consentText }))
      .execute();
  }
}
