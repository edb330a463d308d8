import { nowSeconds } from '../../clock.js';
import { randomId, randomToken, tokenHash } from '../../crypto/random.js';
import { hashPassword, needsRehash, verifyDummy, verifyPassword } from '../../crypto/passwords.js';
import { REALM_DEFAULTS } from '../../config/defaults.js';
import { realmBase, type Services } from '../../services.js';
import type { AppInitiatedAction, AuthorizationParams, BrowserSession, Client, Impersonator, Interaction, Organization, Realm, RequiredAction, Scope, User } from '../../storage/types.js';
import { pendingActions } from '../../admin/required-actions.js';
import { storedPolicy } from '../../admin/password-policy.js';
import { clientResponse, type ClientResponse } from './checks.js';
import { claimScopes } from '../scopes.js';
import { InteractionLimitError } from './interaction-caps.js';
import { federatedSignIn } from '../ldap/federation.js';
import { providerName } from '../social-providers.js';
import { linkingProvider, mayLinkAccounts } from '../../admin/operations/account-linking.js';
import { findOwnCredential, removable, type OwnCredential } from '../../admin/operations/credential-deletion.js';
import { reviewProblems } from '../../admin/operations/profile-actions.js';

/** The organization of a code, chain or consent of a user who signs in without one. */
export const NO_ORGANIZATION = '';

/** What the browser is shown next while an authorization request is pending. */
export type Step =
  | { kind: 'login' }
  /** The user's authenticator code (RFC 6238): the password was right; no session exists yet. */
  | { kind: 'otp'; username: string; otherMethod?: boolean }
  /** The user's security key (WebAuthn): the password was right; no session exists yet. `otherMethod`: they have an authenticator app too. */
  | { kind: 'webauthn'; username: string; otherMethod?: boolean }
  /** Keycloak's webauthn-register required action: a security key to register. */
  | { kind: 'webauthn-register'; username: string; passwordless?: boolean }
  /**
   * Keycloak's UPDATE_PASSWORD required action: the password was right but temporary; no session exists
   * yet. `aia`: asked for by the client (kc_action), with a session, and the user may cancel it.
   */
  | { kind: 'update-password'; username: string; aia?: boolean; expired?: boolean }
  /** Keycloak's CONFIGURE_TOTP required action, or the client's kc_action (`aia`): an authenticator app to set up. */
  | { kind: 'configure-otp'; username: string; aia?: boolean }
  /** Keycloak's UPDATE_PROFILE required action, or the client's kc_action (`aia`, cancellable): email and names to review. */
  | { kind: 'update-profile'; username: string; aia?: boolean }
  /** Keycloak's TERMS_AND_CONDITIONS required action: the realm's terms, accepted or declined. */
  | { kind: 'terms'; username: string }
  /**
   * Keycloak's delete_account required action, or the client's kc_action (`aia`, cancellable, after a new
   * sign-in): the user confirms that their account be deleted.
   */
  | { kind: 'delete-account'; username: string; aia?: boolean }
  /**
   * Keycloak's idp_link, asked for by the client (kc_action=idp_link:<alias>, cancellable): the signed-in
   * user links their account at the provider `alias` (`provider`: its name as the login page shows it).
   */
  | { kind: 'idp-link'; username: string; alias: string; provider: string; aia: true }
  /**
   * Keycloak's delete_credential, asked for by the client (kc_action=delete_credential:<id>, cancellable):
   * the signed-in user confirms the deletion of that credential of theirs; the password cannot be deleted
   * (`removable` false: the page says so, and only Cancel goes on).
   */
  | { kind: 'delete-credential'; username: string; credential: OwnCredential; removable: boolean; aia: true }
  /** Keycloak's VERIFY_EMAIL required action: a link mailed to `email` (null: the user has none) proves it theirs. */
  | { kind: 'verify-email'; username: string; email: string | null }
  /**
   * Identity brokering: the account at a provider met an existing local user; its owner signs in to it
   * (password) to link them. `passwordless`: the local user has no password to prove it with.
   */
  | { kind: 'link-account'; username: string; provider: string; by: 'email' | 'username'; passwordless: boolean }
  /** Keycloak's first broker login "Review Profile": the provider's account lacks what a user needs (email, names); the user completes it. */
  | { kind: 'review-profile'; provider: string; values: { email: string; firstName: string; lastName: string }; complete?: boolean }
  | { kind: 'consent'; scopes: Scope[] }
  | { kind: 'organization'; organizations: Organization[] }
  | { kind: 'no-organization'; deny: ClientResponse | undefined }
  | { kind: 'redirect'; response: ClientResponse }
  /** The device flow (RFC 8628) ends on a page, not a redirect: the device learns the outcome by polling. */
  | { kind: 'device-done'; approved: boolean };

export async function beginInteraction(
  services: Services,
  input: { realm: Realm; client: Client; params: AuthorizationParams; browserHash: string; session: BrowserSession | undefined; ip: string },
): Promise<Interaction> {
  const now = nowSeconds(services.clock);
  // Bounded storage (issue 11): unfinished requests are capped per address and overall.
  const cap = await services.interactionCaps.exceeded(input.ip, now);
  if (cap) throw new InteractionLimitError(cap);
  const interaction: Interaction = {
    id: randomToken(18),
    realmId: input.realm.id,
    clientId: input.client.clientId,
    browserHash: input.browserHash,
    csrfToken: randomToken(24),
    params: input.params,
    userId: input.session?.userId ?? null,
    sessionId: input.session?.id ?? null,
    consented: false,
    organizationId: null,
    expiresAt: now + REALM_DEFAULTS.interactionLifetime,
    secondFactor: false,
  };
  await services.store.interactions.create({ ...interaction, now, ip: input.ip });
  return interaction;
}

/**
 * OIDC Core 3.1.2.1: whether an existing browser session may be used: not with prompt=login or
 * select_account, and not when it is older than max_age (or max_age is 0).
 */
export function sessionUsable(params: AuthorizationParams, session: BrowserSession | undefined, now: number): BrowserSession | undefined {
  if (!session) return undefined;
  // prompt=create asks for a new account: the form is shown even to a browser signed in (as Keycloak).
  if (params.prompt?.includes('login') || params.prompt?.includes('select_account') || params.prompt?.includes('create')) return undefined;
  // max_age=0 is prompt=login (OIDC Core 3.1.2.1 as amended by errata set 2: a sign-in of this very
  // second is not reused either).
  // A session an administrator opened by impersonation holds no authentication of the user at all: no
  // max_age is met by it (nor a kc_action's max_auth_age), so whatever asks for a recent sign-in asks
  // for the user's own credentials.
  if (params.maxAge !== undefined && (params.maxAge === 0 || session.impersonator !== undefined || now - session.authTime > params.maxAge)) return undefined;
  return session;
}

/** OIDC Core 3.1.2.6: the error for prompt=none when the next step would need the user. */
export function promptNoneError(step: Step): { error: string; description: string } | undefined {
  switch (step.kind) {
    case 'redirect':
    case 'device-done':
      return undefined;
    case 'login':
      return { error: 'login_required', description: 'the user is not logged in' };
    case 'consent':
      return { error: 'consent_required', description: 'the user has not consented to this request' };
    case 'otp':
      return { error: 'login_required', description: 'the user must enter an authenticator code' };
    case 'webauthn':
      return { error: 'login_required', description: 'the user must use their security key' };
    case 'webauthn-register':
      return { error: 'interaction_required', description: 'the user must register a security key' };
    case 'update-password':
      return { error: 'interaction_required', description: 'the user must choose a new password' };
    case 'configure-otp':
      return { error: 'interaction_required', description: 'the user must set up an authenticator app' };
    case 'link-account':
      return { error: 'login_required', description: 'the user must sign in' };
    case 'verify-email':
      return { error: 'interaction_required', description: 'the user must verify their email address' };
    case 'update-profile':
      return { error: 'interaction_required', description: 'the user must update their profile' };
    case 'terms':
      return { error: 'interaction_required', description: 'the user must accept the terms and conditions' };
    case 'delete-account':
      return { error: 'interaction_required', description: 'the user must confirm the deletion of their account' };
    case 'idp-link':
      return { error: 'interaction_required', description: 'the user must link their account at the identity provider' };
    case 'delete-credential':
      return { error: 'interaction_required', description: 'the user must confirm the deletion of their credential' };
    default:
      return { error: 'interaction_required', description: 'the user must choose an organization' };
  }
}

/** The user said no: the device flow's code is denied, a redirect-based client gets access_denied. */
export async function denyRequest(services: Services, realm: Realm, ia: Interaction): Promise<Step> {
  await services.store.interactions.delete(ia.id);
  if (ia.params.deviceCodeHash) {
    await services.store.devices.deny(ia.params.deviceCodeHash);
    return { kind: 'device-done', approved: false };
  }
  return { kind: 'redirect', response: errorResponse(services, realm, ia.params, 'access_denied', 'the user denied access') };
}

/** Where the client learns the outcome of the request: `error` (RFC 6749 4.1.2.1) or `code`. */
export function errorResponse(services: Services, realm: Realm, params: AuthorizationParams, error: string, description: string): ClientResponse {
  return clientResponse(
    services.config.appUrl,
    params.redirectUri,
    { error, error_description: description, state: params.state, iss: realmBase(services.config, realm.id) },
    params.responseMode,
  );
}

/**
 * Decides the next step: login, then the authenticator code when the user has an authenticator, then the
 * required actions (a new password when the one typed was temporary, an authenticator to set up), then consent (skipped when an earlier consent covers these scopes),
 * then organization choice (skipped when the user has one organization and consented for it before),
 * then the code.
 */
export async function nextStep(services: Services, realm: Realm, client: Client, ia: Interaction): Promise<Step> {
  if (!ia.userId) {
    if (ia.params.brokerLink) return linkStep(services, realm, ia.params.brokerLink);
    return ia.params.brokerReview ? reviewStep(services, realm, ia.params.brokerReview) : { kind: 'login' };
  }
  // A pending required action comes first, whether the user just typed their password (no session yet)
  // or came back with a session made before an administrator required it (Keycloak asks then too).
  const user = await services.store.users.get(ia.userId);
  if (!user || !user.enabled) return { kind: 'login' };
  // The password was typed in this request (no session yet): the second factor before anything else.
  if (!ia.sessionId && !ia.secondFactor) {
    const [otp, key] = await Promise.all([services.store.otp.has(user.id), services.store.webauthn.has(user.id)]);
    // Both: the key first (as Keycloak lists WebAuthn before OTP), the app when the user chose it.
    if (key && (!otp || ia.params.secondFactorMethod !== 'otp')) return { kind: 'webauthn', username: user.username, otherMethod: otp };
    if (otp) return { kind: 'otp', username: user.username, otherMethod: key };
  }
  // The realm's enabled actions the user has, by the realm's priorities (a disabled one is kept, not asked).
  for (const action of pendingActions(realm, user)) {
    const step = actionStep(services, realm, user, action);
    if (step) return step;
  }
  if (!ia.sessionId) return { kind: 'login' };
  // The client's kc_action, once signed in (recently: checks.ts bounds max_age), until done or cancelled.
  if (ia.params.kcAction && !ia.params.kcActionStatus) {
    const action = ia.params.kcAction;
    if (action !== 'idp_link' && action !== 'delete_credential') return { kind: AIA_STEPS[action], username: user.username, aia: true };
    // Keycloak ignores an idp_link or a delete_credential it cannot do (no such provider, a user who may
    // not manage links; no credential of that id, or none named): the flow goes on.
    const step = action === 'idp_link' ? await idpLinkStep(services, realm, user, ia.params.kcActionParameter) : await deleteCredentialStep(services, user, ia.params.kcActionParameter);
    if (step) return step;
  }
  const orgs = await services.store.users.organizations(ia.userId);
  if (orgs.length === 0 && !realm.organizationRequired) {
    // Organization not required (most realms moved from Keycloak): a user of none signs in with no
    // organization (stored as ''), after consent as usual.
    const covered = ia.params.prompt?.includes('consent') || client.public ? [] : await services.store.consents.organizationsCovering(realm.id, ia.userId, client.clientId, ia.params.scopes);
    if (!ia.consented && !covered.includes(NO_ORGANIZATION)) return { kind: 'consent', scopes: await consentScopes(services, realm, ia.params.scopes) };
    return finish(services, realm, { ...ia, organizationId: NO_ORGANIZATION });
  }
  if (orgs.length === 0) {
    if (ia.params.deviceCodeHash) {
      await services.store.devices.deny(ia.params.deviceCodeHash);
      return { kind: 'no-organization', deny: undefined };
    }
    return { kind: 'no-organization', deny: errorResponse(services, realm, ia.params, 'access_denied', 'the user belongs to no organization') };
  }
  // prompt=consent asks again even when an earlier consent covers the request; so does every request
  // of a public client, whose identity nothing proves (RFC 8252 8.6, RFC 6749 10.2).
  const covered = ia.params.prompt?.includes('consent') || client.public
    ? []
    : await services.store.consents.organizationsCovering(realm.id, ia.userId, client.clientId, ia.params.scopes);
  const only = orgs.length === 1 ? orgs[0] : undefined;

  if (ia.organizationId === null) {
    if (only && covered.includes(only.id)) return finish(services, realm, { ...ia, organizationId: only.id });
    if (!ia.consented && covered.length === 0) return { kind: 'consent', scopes: await consentScopes(services, realm, claimScopes(ia.params.scopes, client)) };
    return { kind: 'organization', organizations: orgs };
  }
  if (!orgs.some((o) => o.id === ia.organizationId)) return { kind: 'organization', organizations: orgs };
  if (!ia.consented && !covered.includes(ia.organizationId)) return { kind: 'consent', scopes: await consentScopes(services, realm, claimScopes(ia.params.scopes, client)) };
  return finish(services, realm, ia);
}

/** The page of one required action; undefined when there is nothing left to do (an email verified meanwhile). */
function actionStep(services: Services, realm: Realm, user: User, action: RequiredAction): Step | undefined {
  switch (action) {
    case 'UPDATE_PASSWORD':
      return { kind: 'update-password', username: user.username, ...(passwordExpired(services, realm, user) ? { expired: true } : {}) };
    case 'CONFIGURE_TOTP':
      return { kind: 'configure-otp', username: user.username };
    case 'webauthn-register':
      return { kind: 'webauthn-register', username: user.username };
    case 'webauthn-register-passwordless':
      return { kind: 'webauthn-register', username: user.username, passwordless: true };
    case 'TERMS_AND_CONDITIONS':
      return { kind: 'terms', username: user.username };
    case 'UPDATE_PROFILE':
      return { kind: 'update-profile', username: user.username };
    case 'VERIFY_EMAIL':
      return user.emailVerified ? undefined : { kind: 'verify-email', username: user.username, email: user.email };
    case 'delete_account':
      return { kind: 'delete-account', username: user.username };
    case 'idp_link':
    case 'delete_credential':
      // Set on a user they name no provider or credential: Keycloak asks nothing (IdpLinkAction and DeleteCredentialAction ignore them).
      return undefined;
  }
}

/**
 * kc_action=idp_link:<alias> (Keycloak 26's IdpLinkAction): the page that asks the signed-in user to link
 * their account at the realm's enabled provider `alias` (a link-only one too: that is what it is for).
 * As Keycloak, the user needs the account client's manage-account or manage-account-links role when the
 * realm has those roles (imported with Keycloak's built-in clients); a realm without them lets everyone.
 */
async function idpLinkStep(services: Services, realm: Realm, user: User, alias: string | undefined): Promise<Step | undefined> {
  const p = alias ? await linkingProvider(services.store, realm.id, alias) : undefined;
  if (!p) return undefined;
  if (!(await mayLinkAccounts(services.store, realm.id, user.id))) return undefined;
  return { kind: 'idp-link', username: user.username, alias: p.alias, provider: providerName(p), aia: true };
}

/** kc_action=delete_credential:<id> (Keycloak's DeleteCredentialAction): the confirmation page of that credential of the signed-in user. */
async function deleteCredentialStep(services: Services, user: User, id: string | undefined): Promise<Step | undefined> {
  const credential = id ? await findOwnCredential(services.store, user, id) : undefined;
  return credential ? { kind: 'delete-credential', username: user.username, credential, removable: removable(credential), aia: true } : undefined;
}

/** The page of each action a client may ask for (kc_action). */
const AIA_STEPS: Record<Exclude<AppInitiatedAction, 'idp_link' | 'delete_credential'>, 'configure-otp' | 'update-profile' | 'update-password' | 'delete-account'> = {
  CONFIGURE_TOTP: 'configure-otp',
  UPDATE_PROFILE: 'update-profile',
  UPDATE_PASSWORD: 'update-password',
  delete_account: 'delete-account',
};

async function linkStep(services: Services, realm: Realm, link: NonNullable<AuthorizationParams['brokerLink']>): Promise<Step> {
  const [user, provider] = await Promise.all([services.store.users.get(link.userId), services.store.identityProviders.get(realm.id, link.alias)]);
  if (!user || !provider) return { kind: 'login' };
  return { kind: 'link-account', username: user.username, provider: provider.displayName ?? provider.alias, by: link.by, passwordless: user.passwordHash.startsWith('!') };
}

async function reviewStep(services: Services, realm: Realm, review: NonNullable<AuthorizationParams['brokerReview']>): Promise<Step> {
  const provider = await services.store.identityProviders.get(realm.id, review.alias);
  if (!provider || !provider.enabled) return { kind: 'login' };
  const values = { email: review.email ?? '', firstName: review.firstName ?? '', lastName: review.lastName ?? '' };
  // Under the realm's "on" mode an account that lacks nothing is shown too: the page then only asks to check it.
  const complete = realm.brokerReviewProfile === 'on' && (await reviewProblems(services, realm, values)).length === 0;
  return { kind: 'review-profile', provider: providerName(provider), values, ...(complete ? { complete } : {}) };
}

async function consentScopes(services: Services, realm: Realm, names: string[]): Promise<Scope[]> {
  const all = await services.cache.realmScopes(realm.id);
  return names.map((n) => all?.get(n) ?? { name: n, consentText: n });
}

/** Issues the code (only its hash is stored), records the consent and ends the interaction. */
async function finish(services: Services, realm: Realm, ia: Interaction): Promise<Step> {
  const now = nowSeconds(services.clock);
  const { params } = ia;
  if (ia.consented) {
    await services.store.consents.grant({
      realmId: realm.id,
      userId: ia.userId!,
      clientId: ia.clientId,
      organizationId: ia.organizationId!,
      scopes: params.scopes,
      now,
    });
  }
  const session = ia.sessionId!;
  const authTime = (await services.store.sessions.get(session))?.authTime ?? now;
  if (params.deviceCodeHash) {
    const approved = await services.store.devices.approve(params.deviceCodeHash, {
      userId: ia.userId!,
      sessionId: session,
      organizationId: ia.organizationId!,
      authTime,
      now,
    });
    await services.store.interactions.delete(ia.id);
    await services.audit.record({ realmId: realm.id, type: 'DEVICE_APPROVED', outcome: approved ? 'success' : 'failure', clientId: ia.clientId, userId: ia.userId, ...(approved ? {} : { reason: 'device code expired' }) });
    return { kind: 'device-done', approved };
  }
  const code = randomToken(32);
  await services.store.codes.create({
    hash: tokenHash(code),
    realmId: realm.id,
    clientId: ia.clientId,
    redirectUri: params.redirectUri,
    userId: ia.userId!,
    sessionId: session,
    organizationId: ia.organizationId!,
    scopes: params.scopes,
    codeChallenge: params.codeChallenge ?? null,
    codeChallengeMethod: params.codeChallengeMethod ?? null,
    nonce: params.nonce ?? null,
    resources: params.resources ?? [],
    dpopJkt: params.dpopJkt ?? null,
    authTime,
    createdAt: now,
    expiresAt: now + realm.codeLifetime,
  });
  await services.store.interactions.delete(ia.id);
  await services.audit.record({ realmId: realm.id, type: 'CODE_ISSUED', outcome: 'success', clientId: ia.clientId, userId: ia.userId, reason: params.scopes.join(' ') });
  // RFC 9207: iss lets the client detect a mix-up between authorization servers.
  return {
    kind: 'redirect',
    // Keycloak's kc_action_status (with kc_action) tells the client how the action it asked for ended.
    response: clientResponse(
      services.config.appUrl,
      params.redirectUri,
      { code, state: params.state, iss: realmBase(services.config, realm.id), ...(params.kcAction && params.kcActionStatus ? { kc_action_status: params.kcActionStatus, kc_action: params.kcAction } : {}) },
      params.responseMode,
    ),
  };
}

/** Checks a username and password; unknown users cost the same time as known ones. */
/**
 * The user a sign-in form (or the password grant) names: by username (ignoring case), else, when the
 * realm allows it (Keycloak's loginWithEmailAllowed), by email when exactly one user of the realm has it.
 * An email several users have (duplicateEmailsAllowed, or data from before it was refused) names nobody:
 * the sign-in then fails as for an unknown name, with the same answer and the same work (no enumeration).
 */
export async function findLoginUser(services: Services, realm: Realm, typed: string): Promise<User | undefined> {
  const name = typed.trim().toLowerCase();
  if (name === '' || name.length > 320) return undefined;
  const byName = await services.store.users.findByUsername(realm.id, name);
  if (byName || !realm.loginWithEmailAllowed || !name.includes('@')) return byName;
  const byEmail = await services.store.users.findByEmail(realm.id, name, 2);
  return byEmail.length === 1 ? byEmail[0] : undefined;
}

/**
 * Checks the password of `user` (found by findLoginUser); without a user, a dummy hash is verified so
 * that an unknown name costs the same time as a wrong password.
 */
export async function authenticateUser(services: Services, realm: Realm, user: User | undefined, password: string, typed = ''): Promise<User | undefined> {
  // User federation: a name not found here, or a user whose password lives in LDAP, is checked there
  // (only in a realm that has a provider: the others never load the LDAP client).
  if ((!user && typed !== '') || user?.federationLink) {
    if (await services.store.userStorage.any(realm.id)) return federatedSignIn(services, realm, { user, typed, password });
  }
  if (!user || user.federationLink) {
    await verifyDummy(password);
    return undefined;
  }
  const ok = await verifyPassword(user.passwordHash, password);
  if (!ok || !user.enabled) return undefined;
  const expired = await expirePassword(services, realm, user);
  if (needsRehash(expired.passwordHash)) {
    // A hash imported from Keycloak (PBKDF2, other argon2 parameters) becomes Realmgate's argon2id now
    // that the password is known, as Keycloak itself re-hashes when its policy changed.
    const passwordHash = await hashPassword(password);
    await services.store.users.update(user.id, { passwordHash });
    return { ...expired, passwordHash };
  }
  return expired;
}

/**
 * Keycloak's forceExpiredPasswordChange(days): a password set that many days ago or more must be changed
 * at this sign-in. As Keycloak's UpdatePassword trigger, UPDATE_PASSWORD is added to the user (kept until
 * done): the login pages then ask for a new password, the password grant refuses the user as it does
 * any user with a required action. The server's clock decides, the one that dated the password.
 */
async function expirePassword(services: Services, realm: Realm, user: User): Promise<User> {
  if (user.federationLink || user.requiredActions.includes('UPDATE_PASSWORD') || !passwordExpired(services, realm, user)) return user;
  const requiredActions: RequiredAction[] = [...user.requiredActions, 'UPDATE_PASSWORD'];
  await services.store.users.update(user.id, { requiredActions });
  return { ...user, requiredActions };
}

/** Whether the realm's forceExpiredPasswordChange(days) says the user's password is too old. */
export function passwordExpired(services: Services, realm: Realm, user: User): boolean {
  const days = storedPolicy(realm.passwordPolicy).forceExpiredPasswordChange;
  return days !== undefined && nowSeconds(services.clock) - user.passwordChangedAt >= days * 86_400;
}

/** The request a session starts from: its address (behind trusted proxies, the client's) and User-Agent. */
export interface SessionOrigin {
  ip: string;
  userAgent: string | undefined;
}

/** A request's SessionOrigin (Fastify's req.ip already reads X-Forwarded-For from trusted proxies only). */
export function sessionOrigin(req: { ip: string; headers: Record<string, string | string[] | undefined> }): SessionOrigin {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, userAgent: typeof ua === 'string' ? ua : undefined };
}

function originOf(from: SessionOrigin | undefined): Pick<BrowserSession, 'ipAddress' | 'userAgent'> {
  if (!from) return {};
  // Kept as text for display: control characters dropped, within the columns' lengths.
  const ua = from.userAgent?.replace(/[\x00-\x1f\x7f]/g, '').trim().slice(0, 255);
  return { ipAddress: from.ip.slice(0, 64), ...(ua ? { userAgent: ua } : {}) };
}

/**
 * A new browser session; the cookie carries `secret`, the database only its hash. A remembered one
 * ("Remember me" ticked, in a realm that offers it) lasts the realm's ssoSessionMaxLifespanRememberMe and
 * ends when unused for its ssoSessionIdleTimeoutRememberMe, each when set (0: the usual lifetime, no idle end).
 */
export async function createBrowserSession(services: Services, realm: Realm, userId: string, opts: { rememberMe?: boolean; impersonator?: Impersonator; from?: SessionOrigin } = {}): Promise<{ session: BrowserSession; secret: string }> {
  const now = nowSeconds(services.clock);
  const secret = randomToken(32);
  const remembered = opts.rememberMe === true && realm.rememberMe;
  const lifetime = remembered && realm.ssoMaxRememberMe > 0 ? realm.ssoMaxRememberMe : realm.ssoSessionLifetime;
  const session: BrowserSession = { id: randomId(), realmId: realm.id, userId, authTime: now, expiresAt: now + lifetime, rememberMe: remembered, idleTimeout: remembered ? realm.ssoIdleRememberMe : 0, ...(opts.impersonator ? { impersonator: opts.impersonator } : {}), ...originOf(opts.from) };
  await services.store.sessions.create({ ...session, secretHash: tokenHash(secret), now });
  return { session, secret };
}
