import { requiredActionList, requiredActionRepresentation } from '../required-actions.js';
import { defaultScopesOf } from '../../oauth/scopes.js';
import { realmScopeDefaults } from '../operations/clients.js';
import { protocolMappersByOwner } from './representations/protocol-mapper.js';
import type { Store } from '../../storage/store.js';
import { bindCredentialOf, LDAP_MAPPER_TYPE } from '../operations/user-storage.js';
import { SECRET_MASK } from '../operations/identity-providers.js';
import type { Client, User } from '../../storage/types.js';
import { realmRepresentation } from '../operations/default-role.js';
import { openSmtpPassword } from '../../crypto/smtp-secret.js';
import { AUTH_METHODS_ATTRIBUTE, authenticatorType, backchannelAttributes, dpopAttributes, frontchannelAttributes, jwtKeyAttributes, parAttributes, requestObjectAttributes, tokenExchangeAttributes } from './representations/client.js';
import { exportCredential, type KeycloakCredential } from './credentials.js';
import { exportOtpCredential } from './otp-credentials.js';
import { openOtpKey } from '../../crypto/otp-secret.js';
import { otpSummary, webauthnSummary } from '../operations/user-credentials.js';
import { exportWebAuthnCredential } from './webauthn-credentials.js';
import { REALM_MANAGEMENT } from '../authorization.js';
import { isAdminRole } from '../operations/roles.js';
import { serviceAccountUsername } from '../operations/service-accounts.js';
import type { Role } from '../../storage/repos/roles.js';
import type { Group } from '../../storage/repos/groups.js';
import { NotFound } from '../validation.js';
import { keyProviders } from './signing-keys.js';
import { isPublished } from '../../crypto/keystore.js';
import { openPrivateJwk } from '../../crypto/key-encryption.js';
import { toFederatedIdentityRepresentation, toIdentityProviderRepresentation } from './representations/identity-provider.js';
import { toProviderMapperRepresentation } from './representations/identity-provider-mapper.js';
import { providerSecret } from '../operations/identity-providers.js';
import type { IdentityProvider } from '../../storage/types.js';

/** Keycloak's placeholder for a secret left out of an export. */
export const MASKED_SECRET = '**********';
/**
 * Client secrets are stored only as hashes, so no export can give them back in clear. With
 * --with-secrets the hash travels in this attribute: Realmgate's import restores it (the client keeps
 * its secret); Keycloak ignores it, and such a client needs a new secret there.
 */
export const SECRET_HASH_ATTRIBUTE = 'realmgate.client.secret.hash';

type Json = Record<string, unknown>;

function clientRepresentation(c: Client, withSecrets: boolean): Json {
  const attributes: Record<string, string> = {};
  if (c.postLogoutRedirectUris.length > 0) attributes['post.logout.redirect.uris'] = c.postLogoutRedirectUris.join('##');
  // Realmgate requires PKCE S256 from public clients (RFC 9700 2.1.1).
  if (c.public || c.pkceMethod === 'S256') attributes['pkce.code.challenge.method'] = 'S256';
  if (!c.public && withSecrets && c.secretHash) attributes[SECRET_HASH_ATTRIBUTE] = c.secretHash;
  // As the admin API shows it: which of client-secret's two ways the client allows (Keycloak ignores it).
  if (!c.public) attributes[AUTH_METHODS_ATTRIBUTE] = c.authMethods.join(' ');
  Object.assign(attributes, backchannelAttributes(c), parAttributes(c), requestObjectAttributes(c), tokenExchangeAttributes(c), dpopAttributes(c), frontchannelAttributes(c), jwtKeyAttributes(c));
  return {
    clientId: c.clientId,
    ...(c.name !== null ? { name: c.name } : {}),
    enabled: c.enabled,
    protocol: 'openid-connect',
    clientAuthenticatorType: authenticatorType(c),
    ...(c.public ? {} : { secret: MASKED_SECRET }),
    publicClient: c.public,
    bearerOnly: false,
    consentRequired: true,
    standardFlowEnabled: c.standardFlowEnabled,
    implicitFlowEnabled: false,
    directAccessGrantsEnabled: c.directAccessGrantsEnabled,
    serviceAccountsEnabled: c.serviceAccountsEnabled,
    redirectUris: c.redirectUris,
    webOrigins: c.webOrigins,
    frontchannelLogout: c.frontchannelLogout.enabled,
    fullScopeAllowed: c.fullScopeAllowed,
    attributes,
    defaultClientScopes: defaultScopesOf(c).filter((s) => s !== 'openid'),
    optionalClientScopes: c.optionalScopes,
  };
}

/**
 * Keycloak's RoleRepresentation: `composite` true when the role contains others, and then `composites`,
 * the roles it contains directly, realm roles by name and client roles by clientId (ExportUtils writes
 * them so; an import adds them back by name, Realmgate's as Keycloak's).
 */
function roleRepresentation(r: Role, contained: ReadonlyMap<string, Role[]>): Json {
  const members = contained.get(r.id) ?? [];
  const realm = members.filter((m) => m.clientId === '').map((m) => m.name);
  const client: Record<string, string[]> = {};
  for (const m of members) if (m.clientId !== '') (client[m.clientId] ??= []).push(m.name);
  const composites = members.length > 0 ? { composites: { ...(realm.length > 0 ? { realm } : {}), ...(Object.keys(client).length > 0 ? { client } : {}) } } : {};
  return { id: r.id, name: r.name, ...(r.description !== null ? { description: r.description } : {}), composite: members.length > 0, ...composites, clientRole: r.clientId !== '', containerId: r.clientId === '' ? r.realmId : r.clientId };
}

/** The roles each composite role of the realm contains directly, by the composite's id. */
async function compositesOf(store: Store, realmId: string): Promise<Map<string, Role[]>> {
  const out = new Map<string, Role[]>();
  for (const id of await store.roles.compositeIds(realmId)) out.set(id, await store.roles.composites(id));
  return out;
}

/** A user's role mappings as Keycloak exports them: realmRoles, and clientRoles by clientId. */
function roleMappings(roles: Role[]): Json {
  const realmRoles = roles.filter((r) => r.clientId === '').map((r) => r.name);
  const clientRoles: Record<string, string[]> = {};
  for (const r of roles) if (r.clientId !== '') (clientRoles[r.clientId] ??= []).push(r.name);
  return { ...(realmRoles.length > 0 ? { realmRoles } : {}), ...(Object.keys(clientRoles).length > 0 ? { clientRoles } : {}) };
}

/**
 * The realm's groups as Keycloak exports them: the top-level ones, each with its subGroups (by name),
 * its attributes and the roles mapped to it; and each group's path, by id, for its members' `groups`.
 */
async function groupTree(store: Store, realmId: string): Promise<{ groups: Json[]; paths: Map<string, string> }> {
  const all = await store.groups.all(realmId);
  const children = new Map<string, Group[]>();
  for (const g of all) children.set(g.parentId, [...(children.get(g.parentId) ?? []), g]);
  const paths = new Map<string, string>();
  const represent = async (g: Group, parentPath: string): Promise<Json> => {
    const path = `${parentPath}/${g.name}`;
    paths.set(g.id, path);
    const subGroups: Json[] = [];
    for (const c of children.get(g.id) ?? []) subGroups.push(await represent(c, path));
    // Keycloak writes realmRoles and clientRoles even when empty (its exports do).
    return { id: g.id, name: g.name, path, ...(g.description ? { description: g.description } : {}), attributes: g.attributes, realmRoles: [], clientRoles: {}, ...roleMappings(await store.groups.mappedRoles(g.id)), subGroups };
  };
  const groups: Json[] = [];
  for (const g of children.get('') ?? []) groups.push(await represent(g, ''));
  return { groups, paths };
}

/** A user's groups as Keycloak exports them: their paths, sorted. */
async function groupPaths(store: Store, userId: string, paths: Map<string, string>): Promise<Json> {
  const mine = (await store.groups.userGroups(userId)).flatMap((g) => paths.get(g.id) ?? []).sort();
  return mine.length > 0 ? { groups: mine } : {};
}

/**
 * A user's credentials in the file: none without secrets; with them, the password (when Keycloak knows
 * its kind) and each authenticator with its key (one whose key does not open, altered in the database,
 * is left out: it accepts no code anyway). Also whether the user has an authenticator (Keycloak's totp).
 */
async function userCredentialsOf(store: Store, u: User, withSecrets: boolean): Promise<{ credentials: KeycloakCredential[]; totp: boolean }> {
  const otp = await store.otp.list(u.id);
  // Security keys hold nothing secret (a public key, a counter): they move with or without secrets.
  const keys = (await store.webauthn.list(u.id)).map((k) => exportWebAuthnCredential(webauthnSummary(k)));
  if (!withSecrets) return { credentials: keys, totp: otp.length > 0 };
  const credentials: KeycloakCredential[] = [];
  // Its date is when the password was set: Keycloak's forceExpiredPasswordChange (and Realmgate's import) count from it.
  const password = exportCredential(u.passwordHash, u.passwordChangedAt * 1000);
  if (password) credentials.push(password);
  // The earlier passwords passwordHistory keeps, as Keycloak exports them (type password-history).
  for (const h of await store.users.passwordHistoryEntries(u.id)) {
    const earlier = exportCredential(h.passwordHash, h.createdAt * 1000);
    if (earlier) credentials.push({ ...earlier, type: 'password-history' });
  }
  for (const c of otp) {
    const key = await openOtpKey(store, c.id, u.id, c.sealedSecret);
    if (key) credentials.push(exportOtpCredential(otpSummary(c), key));
  }
  credentials.push(...keys);
  return { credentials, totp: otp.length > 0 };
}

/**
 * A provider as Keycloak exports it: its organization is named by the organization (its
 * identityProviders), not by an id, which would not move. The client secret is in clear with secrets,
 * as kc.sh export writes it (it is sealed, not hashed: both Realmgate and Keycloak read it back), else
 * Keycloak's mask; one that does not open (altered in the database) stays masked.
 */
async function providerRepresentation(store: Store, p: IdentityProvider, withSecrets: boolean): Promise<Json> {
  const secret = withSecrets ? await providerSecret(store, p) : undefined;
  const { organizationId: _org, ...rep } = toIdentityProviderRepresentation(p, secret !== undefined ? { clientSecret: secret } : {});
  return rep as unknown as Json;
}

function userRepresentation(u: User, orgs: { consents: Json[] }, creds: { credentials: KeycloakCredential[]; totp: boolean }): Json {
  return {
    id: u.id,
    username: u.username,
    enabled: u.enabled,
    ...(u.email ? { email: u.email } : {}),
    emailVerified: u.emailVerified,
    ...(u.firstName ? { firstName: u.firstName } : {}),
    ...(u.lastName ? { lastName: u.lastName } : {}),
    createdTimestamp: u.createdAt * 1000,
    totp: creds.totp,
    credentials: creds.credentials,
    requiredActions: [...u.requiredActions],
    ...(Object.keys(u.attributes).length > 0 ? { attributes: u.attributes } : {}),
    ...(orgs.consents.length > 0 ? { clientConsents: orgs.consents } : {}),
  };
}

/**
 * A realm in Keycloak's export format (one realm object, as `kc.sh export --realm X --file F` writes):
 * settings, client scopes, clients, roles, groups, identity providers, users (with their role mappings,
 * groups and links to identity providers) and organizations (with their identity providers). Without
 * `withSecrets`, client and identity provider secrets are masked and users carry no credentials (as
 * Keycloak's admin-console export); with it, password hashes are Keycloak credentials wherever Keycloak
 * knows their kind (argon2, pbkdf2*), authenticators are otp credentials with their keys (base32),
 * identity providers' client secrets are in clear (as kc.sh export writes them), and the realm's
 * published signing keys are key providers.
 */
export async function exportRealm(store: Store, realmId: string, opts: { withSecrets: boolean; now?: number; users?: boolean }): Promise<Json> {
  // users: false (the partial export): no user is read, only the clients' service accounts, and organizations name no members.
  const withUsers = opts.users !== false;
  const realm = await store.realms.get(realmId);
  if (!realm) throw new NotFound(`realm ${realmId} does not exist`);
  const rep: Json = { ...(await realmRepresentation(store, realm)), organizationsEnabled: true };
  // Keycloak's localizationTexts: locale -> key -> text, the realm's own texts (its realm export has them).
  rep.localizationTexts = Object.fromEntries([...(await store.localization.all(realmId))].map(([locale, texts]) => [locale, Object.fromEntries(texts)]));
  // Keycloak's requiredActions list (RequiredActionProviderRepresentation), the actions Realmgate acts on.
  rep.requiredActions = requiredActionList(realm).map((a) => requiredActionRepresentation(a.alias, a.setting));
  // The SMTP password, masked as Keycloak's admin console shows it; in clear with the secrets (as kc.sh export writes it).
  if (opts.withSecrets && realm.smtpPassword !== null) {
    const password = await openSmtpPassword(store, realm.id, realm.smtpPassword);
    if (password !== undefined) rep.smtpServer = { ...realm.smtpServer, password };
  }
  const scopes = await store.realms.scopes(realmId);
  const mappers = await store.protocolMappers.listRealm(realmId);
  const scopeMappers = protocolMappersByOwner(mappers, 'scope');
  rep.clientScopes = scopes.map((s) => ({ name: s.name, protocol: 'openid-connect', attributes: { 'consent.screen.text': s.consentText, 'display.on.consent.screen': 'true', 'include.in.token.scope': 'true' }, ...scopeMappers(s.name) }));
  // The scopes a new client gets (Keycloak's two lists; openid implied).
  const forNewClients = realmScopeDefaults(realm, scopes.map((s) => s.name));
  rep.defaultDefaultClientScopes = forNewClients.default;
  rep.defaultOptionalClientScopes = forNewClients.optional;
  const clients = (await store.clients.list(realmId)).filter((c) => c.clientId !== REALM_MANAGEMENT);
  const clientMappers = protocolMappersByOwner(mappers, 'client');
  rep.clients = clients.map((c) => ({ ...clientRepresentation(c, opts.withSecrets), ...clientMappers(c.clientId) }));
  // The realm's own roles. Realmgate's admin roles (realm-management's, master's admin and create-realm)
  // are left out, as the realm-management client is: Keycloak and Realmgate make them in every realm;
  // users' mappings to them are written, and grant them again on import.
  // A composite's admin roles are written (realm-management's, as clientId realm-management), and are
  // found again by name on import.
  const contained = await compositesOf(store, realmId);
  const represent = (r: Role): Json => roleRepresentation(r, contained);
  const clientRoles: Record<string, Json[]> = {};
  for (const c of clients) {
    const roles = await store.roles.list(realmId, c.clientId);
    if (roles.length > 0) clientRoles[c.clientId] = roles.map(represent);
  }
  rep.roles = { realm: (await store.roles.list(realmId, '')).filter((r) => !isAdminRole(r)).map(represent), client: clientRoles };
  Object.assign(rep, await scopeMappingsOf(store, realmId, clients.map((c) => c.clientId), scopes.map((s) => s.name)));
  const orgs = await store.organizationAdmin.list(realmId, { max: 1_000_000 });
  const members = new Map<string, string[]>();
  for (const o of withUsers ? orgs : []) {
    for (const userId of await store.organizationAdmin.members(o.id, { max: 10_000_000 })) members.set(o.id, [...(members.get(o.id) ?? []), userId]);
  }
  const { groups, paths } = await groupTree(store, realmId);
  rep.groups = groups;
  // Keycloak's defaultGroups: the paths of the groups every new user joins.
  rep.defaultGroups = (await store.groups.defaults(realmId)).map((g) => paths.get(g.id)!).sort();
  const providers = await store.identityProviders.list(realmId);
  rep.identityProviders = [];
  for (const p of providers) (rep.identityProviders as Json[]).push(await providerRepresentation(store, p, opts.withSecrets));
  rep.identityProviderMappers = (await store.identityProviders.realmMappers(realmId)).map(toProviderMapperRepresentation);
  const all = withUsers ? await store.users.list(realmId) : [];
  const users = all.filter((u) => !u.username.startsWith('service-account-'));
  const byId = new Map(users.map((u) => [u.id, u]));
  const out: Json[] = [];
  for (const u of users) {
    // Keycloak's consent is per client: the scopes granted for any organization, merged.
    const perClient = new Map<string, { scopes: Set<string>; createdAt: number }>();
    for (const c of await store.consents.listForUser(realmId, u.id)) {
      const e = perClient.get(c.clientId) ?? { scopes: new Set<string>(), createdAt: c.createdAt };
      for (const s of c.scopes) if (s !== 'openid') e.scopes.add(s);
      perClient.set(c.clientId, e);
    }
    const consents = [...perClient].map(([clientId, e]) => ({ clientId, grantedClientScopes: [...e.scopes], createdDate: e.createdAt * 1000, lastUpdatedDate: e.createdAt * 1000 }));
    const links = (await store.identityProviders.links(u.id)).map(toFederatedIdentityRepresentation);
    out.push({
      ...userRepresentation(u, { consents }, await userCredentialsOf(store, u, opts.withSecrets)),
      ...roleMappings(await store.roles.mappedRoles(u.id)),
      ...(await groupPaths(store, u.id, paths)),
      ...(links.length > 0 ? { federatedIdentities: links } : {}),
      ...(u.federationLink ? { federationLink: u.federationLink } : {}),
    });
  }
  // Service accounts, as Keycloak exports them (serviceAccountClientId): made anew with their client on
  // import, which grants them the roles written here.
  const accounts = new Map(all.map((u) => [u.username, u]));
  for (const c of clients) {
    const sa = !c.serviceAccountsEnabled ? undefined : withUsers ? accounts.get(serviceAccountUsername(c.clientId)) : await store.users.findByUsername(realmId, serviceAccountUsername(c.clientId));
    if (sa) out.push({ id: sa.id, username: sa.username, enabled: sa.enabled, serviceAccountClientId: c.clientId, ...roleMappings(await store.roles.mappedRoles(sa.id)), ...(await groupPaths(store, sa.id, paths)) });
  }
  rep.users = out;
  rep.organizations = orgs.map((o) => ({
    name: o.name,
    alias: o.alias,
    enabled: o.enabled,
    description: o.description,
    ...(o.redirectUrl ? { redirectUrl: o.redirectUrl } : {}),
    domains: o.domains.map((d) => ({ name: d.name, verified: d.verified })),
    identityProviders: providers.filter((p) => p.organizationId === o.id).map((p) => ({ alias: p.alias })),
    members: (members.get(o.id) ?? []).flatMap((id) => {
      const u = byId.get(id);
      return u ? [{ id: u.id, username: u.username, membershipType: 'UNMANAGED' }] : [];
    }),
  }));
  // The private keys are secrets too: with them, the realm moves with its keys (its tokens and the kids
  // resource servers cached stay valid), into Realmgate or Keycloak.
  if (opts.withSecrets) {
    const now = opts.now ?? Math.floor(Date.now() / 1000);
    const published = (await store.keys.list(realmId)).filter((k) => isPublished(k, realm.accessTokenLifetime, now));
    rep.components = { 'org.keycloak.keys.KeyProvider': keyProviders(published, openPrivateJwk) };
  }
  // User federation: the LDAP providers with their mappers, the bind credential in clear only with secrets.
  const federation = await userStorageComponents(store, realmId, opts.withSecrets === true);
  if (federation.length > 0) rep.components = { ...((rep.components as Json | undefined) ?? {}), 'org.keycloak.storage.UserStorageProvider': federation };
  return rep;
}

/**
 * The role scope mappings as Keycloak's ExportUtils writes them: scopeMappings, the realm roles in the
 * scope of each client (`client`) then of each client scope (`clientScope`); clientScopeMappings, by the
 * clientId owning the roles, the client roles in each client's or client scope's scope. Each is absent
 * when empty, as in Keycloak's exports. Admin roles are written too (realm-management's; master's admin
 * and create-realm): Keycloak and Realmgate have them in every realm, and an import maps them back.
 */
async function scopeMappingsOf(store: Store, realmId: string, clientIds: string[], scopeNames: string[]): Promise<Json> {
  const scopeMappings: Json[] = [];
  const clientScopeMappings: Record<string, Json[]> = {};
  const owners = [...clientIds.map((id) => ({ kind: 'client' as const, id })), ...scopeNames.map((id) => ({ kind: 'scope' as const, id }))];
  for (const o of owners) {
    // The roles mapped, by client and name: a composite as itself, not what tokens expand it to
    // (roleScopes.realm), as Keycloak's ScopeContainerModel.getScopeMappingsStream.
    const roles = await store.roleScopes.list(realmId, o);
    const named = o.kind === 'client' ? { client: o.id } : { clientScope: o.id };
    const realmRoles = roles.filter((r) => r.clientId === '').map((r) => r.name);
    if (realmRoles.length > 0) scopeMappings.push({ ...named, roles: realmRoles });
    const byClient = new Map<string, string[]>();
    for (const r of roles) if (r.clientId !== '') byClient.set(r.clientId, [...(byClient.get(r.clientId) ?? []), r.name]);
    for (const [clientId, names] of byClient) (clientScopeMappings[clientId] ??= []).push({ ...named, roles: names });
  }
  return { ...(scopeMappings.length > 0 ? { scopeMappings } : {}), ...(Object.keys(clientScopeMappings).length > 0 ? { clientScopeMappings } : {}) };
}

/** Keycloak's export of LDAP providers: components with their LDAPStorageMapper subcomponents. */
async function userStorageComponents(store: Store, realmId: string, withSecrets: boolean): Promise<Json[]> {
  const out: Json[] = [];
  for (const p of await store.userStorage.list(realmId)) {
    const credential = withSecrets ? await bindCredentialOf(store, p) : p.sealedBindCredential ? SECRET_MASK : undefined;
    out.push({
      id: p.id,
      name: p.name,
      providerId: p.providerId,
      subComponents: { [LDAP_MAPPER_TYPE]: p.mappers.map((m) => ({ id: m.id, name: m.name, providerId: m.providerId, subComponents: {}, config: m.config })) },
      config: { ...p.config, ...(credential !== undefined ? { bindCredential: [credential] } : {}) },
    });
  }
  return out;
}

/** Keys whose string values are secrets, wherever they sit in a representation (compared in lower case). */
const SECRET_FIELDS = new Set(['secret', 'clientsecret', 'password', 'bindcredential', 'privatekey', 'keystorepassword', 'truststorepassword']);

/** Masks every secret left in a representation (belt and braces: the export masks them already). */
function maskSecrets(v: unknown, depth = 0): unknown {
  if (depth > 32 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => maskSecrets(x, depth + 1));
  const out: Json = {};
  for (const [k, x] of Object.entries(v as Json)) {
    if (SECRET_FIELDS.has(k.toLowerCase()) && (typeof x === 'string' || Array.isArray(x))) out[k] = typeof x === 'string' ? (x === '' ? x : MASKED_SECRET) : x.map((e) => (typeof e === 'string' && e !== '' ? MASKED_SECRET : e));
    else out[k] = maskSecrets(x, depth + 1);
  }
  return out;
}

/**
 * Keycloak's partial export (POST /admin/realms/{realm}/partial-export): the realm's settings, client
 * scopes, required actions, identity providers, organizations (without members) and user federation;
 * its clients (and their service accounts) only with `clients`, its roles and groups (and default
 * groups) only with `groupsAndRoles`; never users or keys. Every secret is Keycloak's mask (**********):
 * client secrets, identity providers' client secrets, the SMTP password, LDAP bind credentials. A
 * service account's roles and groups come with groupsAndRoles only, as Keycloak's.
 */
export async function exportPartialRealm(store: Store, realmId: string, opts: { clients: boolean; groupsAndRoles: boolean }): Promise<Json> {
  const rep = await exportRealm(store, realmId, { withSecrets: false, users: false });
  if (opts.clients) {
    rep.users = ((rep.users as Json[] | undefined) ?? []).map((u) => {
      if (opts.groupsAndRoles) return u;
      const { realmRoles: _r, clientRoles: _c, groups: _g, ...rest } = u;
      return rest;
    });
  } else {
    delete rep.clients;
    delete rep.users;
    // Keycloak writes the scope mappings of clients only with the clients; those of client scopes always.
    const ofScopes = (list: unknown): Json[] => ((list as Json[] | undefined) ?? []).filter((m) => m.client === undefined);
    const realmLevel = ofScopes(rep.scopeMappings);
    if (realmLevel.length > 0) rep.scopeMappings = realmLevel;
    else delete rep.scopeMappings;
    const byClient = Object.entries((rep.clientScopeMappings as Record<string, unknown> | undefined) ?? {}).map(([k, v]) => [k, ofScopes(v)] as const).filter(([, v]) => v.length > 0);
    if (byClient.length > 0) rep.clientScopeMappings = Object.fromEntries(byClient);
    else delete rep.clientScopeMappings;
  }
  if (!opts.groupsAndRoles) {
    delete rep.roles;
    delete rep.groups;
    delete rep.defaultGroups;
  }
  rep.organizations = ((rep.organizations as Json[] | undefined) ?? []).map(({ members: _m, ...o }) => o);
  return maskSecrets(rep) as Json;
}
