import { pendingActions } from '../../admin/required-actions.js';
import { nowSeconds } from '../../clock.js';
import { randomId, sortableId } from '../../crypto/random.js';
import { eventRow } from '../../storage/repos/events.js';
import type { RefreshChain } from '../../storage/types.js';
import { attemptLogin, attemptOtp } from '../brute-force.js';
import { createBrowserSession } from '../authorize/interaction.js';
import { OAuthError } from '../errors.js';
import { required } from '../params.js';
import { buildTokenResponse, chainBinding, mintRefreshToken } from '../tokens.js';
import { realmBase } from '../../services.js';
import { directGrantScopes } from './grant-scopes.js';
import type { Grant, GrantContext } from './types.js';
import { subjectOfUser } from '../../storage/repos/mappers.js';
import { verifyEmailTrigger } from '../../admin/operations/email-verification.js';
import { ENGLISH, type Text } from '../../i18n/translator.js';

/** A refusal's words as the token endpoint says them (error_description, the event): English. */
const english = (t: Text): string => (typeof t === 'string' ? t : ENGLISH.t(t.key, ...t.args));

/**
 * RFC 6749 4.3: the resource owner password credentials grant, for clients the operator enabled it for
 * (Keycloak's directAccessGrantsEnabled; admin-cli, kcadm and keycloak-admin-client log in this way).
 * RFC 6749 4.3.2 asks for protection against brute force: the login page's limiter is used as is.
 * No organization is chosen (there is no page to choose one on): the token carries none.
 */
export const passwordGrant: Grant = {
  grantType: 'password',
  parameters: ['username', 'password', 'scope', 'otp', 'totp'],
  async handle({ services, realm, client, params, ip, userAgent, dpopJkt }: GrantContext) {
    if (!client.directAccessGrantsEnabled) throw new OAuthError('unauthorized_client', 'the password grant is not enabled for this client');
    const username = required(params, 'username');
    const password = required(params, 'password');
    const scopes = await directGrantScopes(services, realm.id, client, params, ['offline_access']);
    const login = await attemptLogin(services, realm, { username, password, ip: ip ?? '', clientId: client.clientId });
    if ('error' in login) {
      await services.audit.record({ realmId: realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: client.clientId, ...(login.subject ? { userId: login.subject.id, username: login.subject.username } : { username }), ip, reason: 'password grant: ' + (login.unavailable ? `user directory unavailable: ${login.unavailable}` : english(login.error)) }, { anonymous: !login.subject || Boolean(login.retryAfter) });
      // The user directory (LDAP) did not answer: nothing was decided about the credentials. RFC 6749
      // 4.1.2.1's temporarily_unavailable (the token endpoint has no better code), as a 503 with Retry-After.
      if (login.unavailable) throw new OAuthError('temporarily_unavailable', english(login.error), { status: 503, retryAfter: login.retryAfter ?? 30, detail: login.unavailable });
      // Keycloak's wording; a locked account says so, with Retry-After.
      throw new OAuthError('invalid_grant', login.retryAfter !== undefined ? english(login.error) : 'Invalid user credentials', login.retryAfter !== undefined ? { retryAfter: login.retryAfter } : {});
    }
    // Keycloak's direct grant evaluates the required actions' triggers too: under verifyEmail, a user whose
    // email is not verified gets VERIFY_EMAIL and is refused below, as at the browser's sign-in.
    const user = await verifyEmailTrigger(services.store, realm, login.user);
    if (await services.store.otp.has(user.id)) {
      // Keycloak's direct grant asks a user with an authenticator for its current code, in `otp` (`totp`
      // in older versions): a missing or wrong one is the same refusal as a wrong password, and counts
      // against the user's codes (attemptOtp) as at the browser's sign-in.
      const code = params.get('otp') ?? params.get('totp') ?? '';
      const otp = code === '' ? { error: 'no one-time code' } : await attemptOtp(services, realm, { user, code, ip: ip ?? '', clientId: client.clientId });
      if ('error' in otp) {
        await services.audit.record({ realmId: realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: client.clientId, userId: user.id, username: user.username, ip, reason: `password grant: ${code === '' ? 'no one-time code' : english(otp.error)}` });
        const retry = 'retryAfter' in otp ? otp.retryAfter : undefined;
        throw new OAuthError('invalid_grant', retry !== undefined ? english(otp.error) : 'Invalid user credentials', retry !== undefined ? { retryAfter: retry } : {});
      }
    }
    if (await services.store.webauthn.has(user.id)) {
      // A security key signs in only in a browser (navigator.credentials): the direct grant cannot ask for
      // it, so a user with one is refused, as a wrong password is (never a way around the key).
      await services.audit.record({ realmId: realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: client.clientId, userId: user.id, username: user.username, ip, reason: 'password grant: the user signs in with a security key (browser only)' });
      throw new OAuthError('invalid_grant', 'Invalid user credentials');
    }
    const pending = pendingActions(realm, user);
    if (pending.length > 0) {
      // Keycloak's direct grant refuses a user with a pending required action (one the realm has enabled;
      // a disabled one is not asked): only the browser sign-in has a page to complete it on. Keycloak's words.
      await services.audit.record({ realmId: realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: client.clientId, userId: user.id, username: user.username, ip, reason: `password grant: required action ${pending.join(', ')} pending` });
      throw new OAuthError('invalid_grant', 'Account is not fully set up');
    }
    const now = nowSeconds(services.clock);
    const { session } = await createBrowserSession(services, realm, user.id, { from: { ip: ip ?? '', userAgent } });
    const maxExpiresAt = now + realm.refreshMaxLifetime;
    const chainId = randomId();
    const refresh = mintRefreshToken({
      realm,
      keys: await services.keys.refreshKeys(realm.id),
      issuer: realmBase(services.config, realm.id),
      chain: { chainId, clientId: client.clientId, userId: user.id, sessionId: session.id, scopes, chainMaxExpiresAt: maxExpiresAt, dpopJkt: chainBinding(client, dpopJkt) },
      gen: 1,
      now,
    });
    const chain: RefreshChain = {
      id: chainId,
      realmId: realm.id,
      clientId: client.clientId,
      userId: user.id,
      organizationId: '',
      scopes,
      sessionId: session.id,
      authTime: now,
      createdAt: now,
      maxExpiresAt,
      revokedAt: null,
      dpopJkt: chainBinding(client, dpopJkt),
    };
    const event = eventRow({ id: sortableId(), time: now, realmId: realm.id, type: 'LOGIN', outcome: 'success', clientId: client.clientId, userId: user.id, username: user.username, ip, reason: 'password grant' });
    await services.store.refresh.create(chain, refresh.hash, event);
    const subject = subjectOfUser(user);
    return buildTokenResponse(services, { realm, client, chain, subject, scopes, refresh, now, dpopJkt });
  },
};
