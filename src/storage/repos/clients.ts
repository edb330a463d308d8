import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './in-transaction.js';
import { ConflictError, NO_BACKCHANNEL_LOGOUT, NO_FRONTCHANNEL_LOGOUT, type BackchannelLogoutSettings, type FrontchannelLogoutSettings, type Client, type ClientAuthMethod, type ClientJwtKeys, type TokenExchangeRefresh, type RequestObjectRequired, type RotatedSecret } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { toClient } from './mappers.js';
import { deleteOwnedMappers } from './protocol-mappers.js';

/** What an update may change; absent fields stay as they are. */
export interface ClientPatch {
  redirectUris?: string[];
  scopes?: string[];
  optionalScopes?: string[];
  secretHash?: string | null;
  enabled?: boolean;
  name?: string | null;
  authMethods?: ClientAuthMethod[];
  postLogoutRedirectUris?: string[];
  idTokenAlg?: string;
  audiences?: string[];
  webOrigins?: string[];
  public?: boolean;
  standardFlowEnabled?: boolean;
  directAccessGrantsEnabled?: boolean;
  serviceAccountsEnabled?: boolean;
  pkceMethod?: Client['pkceMethod'];
  backchannelLogout?: Partial<BackchannelLogoutSettings>;
  requirePushedAuthorizationRequests?: boolean;
  standardTokenExchange?: boolean;
  tokenExchangeRefresh?: TokenExchangeRefresh;
  dpopBoundAccessTokens?: boolean;
  requestObjectRequired?: RequestObjectRequired;
  /** null: any asymmetric algorithm. */
  requestObjectSignatureAlg?: string | null;
  frontchannelLogout?: Partial<FrontchannelLogoutSettings>;
  /** null removes them. */
  jwtKeys?: ClientJwtKeys | null;
  fullScopeAllowed?: boolean;
  /** null removes it. */
  rotatedSecret?: RotatedSecret | null;
  notBefore?: number;
}

export class ClientRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(
    c: Omit<Client, 'createdAt' | 'enabled' | 'optionalScopes' | 'backchannelLogout' | 'requirePushedAuthorizationRequests' | 'dpopBoundAccessTokens' | 'standardTokenExchange' | 'tokenExchangeRefresh' | 'requestObjectRequired' | 'requestObjectSignatureAlg' | 'frontchannelLogout' | 'jwtKeys' | 'fullScopeAllowed' | 'rotatedSecret' | 'notBefore'> & { now: number; fullScopeAllowed?: boolean; optionalScopes?: string[]; requestObjectRequired?: RequestObjectRequired; requestObjectSignatureAlg?: string | null; backchannelLogout?: BackchannelLogoutSettings; requirePushedAuthorizationRequests?: boolean; dpopBoundAccessTokens?: boolean; standardTokenExchange?: boolean; tokenExchangeRefresh?: TokenExchangeRefresh; frontchannelLogout?: FrontchannelLogoutSettings; jwtKeys?: ClientJwtKeys | null },
  ): Promise<void> {
    const bc = c.backchannelLogout ?? NO_BACKCHANNEL_LOGOUT;
    const fc = c.frontchannelLogout ?? NO_FRONTCHANNEL_LOGOUT;
    try {
      await this.db
        .insertInto('clients')
        .values({
          realm_id: c.realmId,
          client_id: c.clientId,
          name: c.name,
          secret_hash: c.secretHash,
          public: c.public ? 1 : 0,
          enabled: 1,
          redirect_uris: JSON.stringify(c.redirectUris),
          scopes: JSON.stringify(c.scopes),
          optional_scopes: JSON.stringify(c.optionalScopes ?? []),
          created_at: c.now,
          auth_method: c.authMethod,
          auth_methods: JSON.stringify(c.authMethods),
          post_logout_redirect_uris: JSON.stringify(c.postLogoutRedirectUris),
          standard_flow_enabled: c.standardFlowEnabled ? 1 : 0,
          direct_access_grants_enabled: c.directAccessGrantsEnabled ? 1 : 0,
          service_accounts_enabled: c.serviceAccountsEnabled ? 1 : 0,
          id_token_alg: c.idTokenAlg,
          audiences: JSON.stringify(c.audiences),
          web_origins: JSON.stringify(c.webOrigins),
          pkce_method: c.pkceMethod,
          backchannel_logout_url: bc.url,
          backchannel_logout_session_required: bc.sessionRequired ? 1 : 0,
          backchannel_logout_revoke_offline: bc.revokeOfflineTokens ? 1 : 0,
          require_pushed_authorization_requests: c.requirePushedAuthorizationRequests ? 1 : 0,
          standard_token_exchange: c.standardTokenExchange ? 1 : 0,
          token_exchange_refresh: c.tokenExchangeRefresh ?? 'NO',
          request_object_required: c.requestObjectRequired ?? 'not required',
          request_object_alg: c.requestObjectSignatureAlg ?? null,
          frontchannel_logout: fc.enabled ? 1 : 0,
          frontchannel_logout_url: fc.url,
          frontchannel_logout_session_required: fc.sessionRequired ? 1 : 0,
          jwt_keys: c.jwtKeys ? JSON.stringify(c.jwtKeys) : null,
          dpop_bound_access_tokens: c.dpopBoundAccessTokens ? 1 : 0,
          full_scope_allowed: c.fullScopeAllowed === false ? 0 : 1,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`client ${c.clientId} already exists in realm ${c.realmId}`);
      throw err;
    }
  }

  async get(realmId: string, clientId: string): Promise<Client | undefined> {
    const row = await this.db
      .selectFrom('clients')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return row ? toClient(row) : undefined;
  }

  async list(realmId: string): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().where('realm_id', '=', realmId).orderBy('client_id').execute();
    return rows.map(toClient);
  }

  async update(
    realmId: string,
    clientId: string,
    patch: ClientPatch,
  ): Promise<boolean> {
    const values: Record<string, string | number | null> = {};
    const flag = (v: boolean): number => (v ? 1 : 0);
    if (patch.public !== undefined) values.public = flag(patch.public);
    if (patch.standardFlowEnabled !== undefined) values.standard_flow_enabled = flag(patch.standardFlowEnabled);
    if (patch.directAccessGrantsEnabled !== undefined) values.direct_access_grants_enabled = flag(patch.directAccessGrantsEnabled);
    if (patch.serviceAccountsEnabled !== undefined) values.service_accounts_enabled = flag(patch.serviceAccountsEnabled);
    if (patch.pkceMethod !== undefined) values.pkce_method = patch.pkceMethod;
    if (patch.authMethods) {
      values.auth_methods = JSON.stringify(patch.authMethods);
      // The single-method column stays meaningful for older readers.
      values.auth_method = patch.authMethods[0] ?? 'client_secret_basic';
    }
    if (patch.postLogoutRedirectUris) values.post_logout_redirect_uris = JSON.stringify(patch.postLogoutRedirectUris);
    if (patch.idTokenAlg !== undefined) values.id_token_alg = patch.idTokenAlg;
    if (patch.audiences) values.audiences = JSON.stringify(patch.audiences);
    if (patch.redirectUris) values.redirect_uris = JSON.stringify(patch.redirectUris);
    if (patch.scopes) values.scopes = JSON.stringify(patch.scopes);
    if (patch.optionalScopes) values.optional_scopes = JSON.stringify(patch.optionalScopes);
    if (patch.secretHash !== undefined) values.secret_hash = patch.secretHash;
    if (patch.enabled !== undefined) values.enabled = patch.enabled ? 1 : 0;
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.webOrigins) values.web_origins = JSON.stringify(patch.webOrigins);
    const bc = patch.backchannelLogout;
    if (bc?.url !== undefined) values.backchannel_logout_url = bc.url;
    if (bc?.sessionRequired !== undefined) values.backchannel_logout_session_required = flag(bc.sessionRequired);
    if (bc?.revokeOfflineTokens !== undefined) values.backchannel_logout_revoke_offline = flag(bc.revokeOfflineTokens);
    if (patch.requirePushedAuthorizationRequests !== undefined) values.require_pushed_authorization_requests = flag(patch.requirePushedAuthorizationRequests);
    if (patch.standardTokenExchange !== undefined) values.standard_token_exchange = flag(patch.standardTokenExchange);
    if (patch.tokenExchangeRefresh !== undefined) values.token_exchange_refresh = patch.tokenExchangeRefresh;
    if (patch.requestObjectRequired !== undefined) values.request_object_required = patch.requestObjectRequired;
    if (patch.requestObjectSignatureAlg !== undefined) values.request_object_alg = patch.requestObjectSignatureAlg;
    const fc = patch.frontchannelLogout;
    if (fc?.enabled !== undefined) values.frontchannel_logout = flag(fc.enabled);
    if (fc?.url !== undefined) values.frontchannel_logout_url = fc.url;
    if (fc?.sessionRequired !== undefined) values.frontchannel_logout_session_required = flag(fc.sessionRequired);
    if (patch.dpopBoundAccessTokens !== undefined) values.dpop_bound_access_tokens = flag(patch.dpopBoundAccessTokens);
    if (patch.fullScopeAllowed !== undefined) values.full_scope_allowed = flag(patch.fullScopeAllowed);
    if (patch.jwtKeys !== undefined) values.jwt_keys = patch.jwtKeys ? JSON.stringify(patch.jwtKeys) : null;
    if (patch.notBefore !== undefined) values.not_before = patch.notBefore;
    if (patch.rotatedSecret !== undefined) {
      values.rotated_secret_hash = patch.rotatedSecret?.hash ?? null;
      values.rotated_secret_expires_at = patch.rotatedSecret?.expiresAt ?? null;
    }
    if (Object.keys(values).length === 0) return true;
    const r = await this.db.updateTable('clients').set(values).where('realm_id', '=', realmId).where('client_id', '=', clientId).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Deletes the client with its protocol mappers and revokes its refresh chains, in one transaction. */
  async delete(realmId: string, clientId: string, now: number = Math.floor(Date.now() / 1000)): Promise<boolean> {
    return inTransaction(this.db, async (trx) => {
      await trx
        .updateTable('refresh_chains')
        .set({ revoked_at: now, revoked_reason: 'client deleted' })
        .where('realm_id', '=', realmId)
        .where('client_id', '=', clientId)
        .where('revoked_at', 'is', null)
        .execute();
      await deleteOwnedMappers(trx, realmId, 'client', clientId);
      await trx.deleteFrom('role_scope_mappings').where('realm_id', '=', realmId).where('owner_kind', '=', 'client').where('owner', '=', clientId).execute();
      const r = await trx.deleteFrom('clients').where('realm_id', '=', realmId).where('client_id', '=', clientId).executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    });
  }
}
