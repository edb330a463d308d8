import { nowSeconds } from '../clock.js';
import { tokenHash } from '../crypto/random.js';
import { realmBase, type Services } from '../services.js';
import { authenticateClient } from './client-auth.js';
import { OAuthError } from './errors.js';
import { readParams, required, type RawParams } from './params.js';
import { verifyAccessToken } from './access-tokens.js';
import { isLegacyRefreshToken, verifyRefreshJwt } from '../crypto/refresh-jwt.js';

/**
 * RFC 7009: a client revokes a token it holds. A refresh token ends its whole chain (2.1: the server
 * may, and for rotation it should, revoke the grant); an access token is refused from then on by
 * introspection and userinfo. Unknown tokens, or tokens of other clients, answer 200 all the same (2.2).
 */
export async function handleRevocation(services: Services, input: { realmId: string; authorization: string | undefined; body: RawParams; ip?: string }): Promise<void> {
  const realm = await services.cache.realm(input.realmId);
  if (!realm) throw new OAuthError('invalid_request', 'realm not found', { status: 404 });
  const params = readParams(input.body, ['client_id', 'client_secret', 'client_assertion', 'token', 'token_type_hint']);
  const client = await authenticateClient(services, realm.id, input.authorization, params, input.ip ?? '', input.body);
  const token = required(params, 'token');
  const now = nowSeconds(services.clock);

  // A refresh token signed by the realm, expired or not (its chain may live on), is looked up by hash.
  const verdict = verifyRefreshJwt(await services.keys.refreshKeys(realm.id), token, { issuer: realmBase(services.config, realm.id), now: undefined });
  const isRefresh = verdict.ok || isLegacyRefreshToken(token);
  // Any token of the chain, current or earlier, names it (storage is per chain): revoking ends the chain.
  // A token from before refresh tokens were JWTs is found through its row in the old per-token table.
  const chainId = verdict.ok ? verdict.claims.chain : isRefresh ? (await services.store.refresh.legacyToken(tokenHash(token)))?.chainId : undefined;
  const state = chainId ? await services.store.tokenState.refreshToken(tokenHash(token), chainId) : undefined;
  if (state) {
    if (state.chain.clientId === client.clientId && state.chain.realmId === realm.id) {
      await services.store.refresh.revokeChain(state.chain.id, now, 'revoked by the client');
      await services.audit.record({ realmId: realm.id, type: 'REVOKE', outcome: 'success', clientId: client.clientId, userId: state.chain.userId, username: state.username, ip: input.ip ?? null, reason: 'refresh token' });
    }
    return;
  }
  if (isRefresh || !token.includes('.')) return;
  const claims = await verifyAccessToken(services, realm, token, { allowExpired: true });
  if (claims && claims.azp === client.clientId && claims.exp > now) {
    await services.store.tokenState.revokeAccessToken(claims.jti, realm.id, claims.exp);
    await services.audit.record({ realmId: realm.id, type: 'REVOKE', outcome: 'success', clientId: client.clientId, userId: claims.sub, ip: input.ip ?? null, reason: 'access token' });
  }
}
