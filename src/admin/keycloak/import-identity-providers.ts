import type { Store } from '../../storage/store.js';
import { IDENTITY_PROVIDER_TYPES, type IdentityProvider } from '../../storage/types.js';
import { checkProvider, ORG_DOMAIN_KEY, ORG_REDIRECT_KEY, SECRET_MASK, type ProviderFields } from '../operations/identity-providers.js';
import { recordAdminEvent, type Actor } from '../operations/common.js';
import { readIdentityProvider } from './representations/identity-provider.js';
import { checkText, ValidationError } from '../validation.js';
import type { RealmReportBuilder, ReportLine } from './import-report.js';
import { checkMapper, MAPPER_TYPES } from '../operations/identity-provider-mappers.js';
import { readProviderMapper } from './representations/identity-provider-mapper.js';
import { ConflictError } from '../../storage/types.js';

/**
 * Identity brokering in a Keycloak file: the realm's identityProviders (OpenID Connect ones, Google and GitHub move, their
 * client secret sealed), the organizations they belong to, users' federatedIdentities (their links to
 * accounts at a provider), the providers' mappers, and what does not move (other provider types).
 * Everything is read and checked before the import's transaction; what needs the database (the
 * organization, the secret's seal, a provider or link stored already) is checked in it, before the
 * write, so that a provider or link refused is a line of the report, never a failed import.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Keycloak resolves `${vault.<key>}` from its vault (a file, a Kubernetes secret) when it needs the value. */
const VAULT_REFERENCE = /^\$\{vault\.[^}]*\}$/;

/** A provider of the file, read: ready to check and store, or refused (the reason). */
export interface FileProvider {
  /** Its alias (or its place in the list, when it has none). */
  name: string;
  element: string;
  fields?: ProviderFields;
  /** Its clientSecret is Keycloak's mask: only a provider stored already (partialImport OVERWRITE) keeps one. */
  masked?: boolean;
  /** What the report says of it besides (left out, behaves otherwise). */
  notes: string[];
  refused?: string;
}

const SOCIAL = IDENTITY_PROVIDER_TYPES.filter((t) => t !== 'oidc' && t !== 'keycloak-oidc').join(', ');

const NOT_SUPPORTED_TYPE = (providerId: string): string =>
  providerId === 'saml'
    ? `a SAML provider: Realmgate brokers to OpenID Connect providers and Keycloak's social providers ${SOCIAL} only`
    : `providerId ${JSON.stringify(providerId)} is not supported: Realmgate brokers to OpenID Connect providers (oidc, keycloak-oidc) and Keycloak's social providers ${SOCIAL} only; another provider that speaks OpenID Connect can be created again as an oidc provider with its endpoints`;

/**
 * Reads the file's identityProviders: no database. An OpenID Connect provider (oidc, keycloak-oidc) is
 * read with the admin API's rules (readIdentityProvider); any other type, a field of the wrong type, a
 * client secret Keycloak keeps in its vault, an alias listed twice are refused with the reason. What
 * Realmgate does not do (store the provider's tokens, run other first-login flows) is a note.
 */
export function readFileProviders(list: unknown[]): FileProvider[] {
  const seen = new Set<string>();
  return list.map((raw, i): FileProvider => {
    const o = isObject(raw) ? raw : {};
    const name = typeof o.alias === 'string' && o.alias !== '' ? o.alias : `#${i + 1} of identityProviders`;
    const element = `identity provider ${name}`;
    const refuse = (reason: string): FileProvider => ({ name, element, notes: [], refused: reason });
    try {
      if (!isObject(raw)) throw new ValidationError('the entry must be an object');
      const providerId = o.providerId ?? 'oidc';
      if (typeof providerId !== 'string') throw new ValidationError('providerId must be a string');
      if (!(IDENTITY_PROVIDER_TYPES as readonly string[]).includes(providerId)) return refuse(NOT_SUPPORTED_TYPE(providerId));
      for (const key of ['storeToken', 'addReadTokenRoleOnCreate'] as const) {
        if (o[key] !== undefined && o[key] !== null && typeof o[key] !== 'boolean') throw new ValidationError(`${key} must be true or false`);
      }
      for (const key of ['firstBrokerLoginFlowAlias', 'postBrokerLoginFlowAlias'] as const) {
        if (o[key] !== undefined && o[key] !== null && typeof o[key] !== 'string') throw new ValidationError(`${key} must be a string`);
      }
      // The admin API refuses storeToken true; a realm that moves keeps the provider, saying so.
      const fields = readIdentityProvider({ ...o, storeToken: undefined });
      // A Keycloak organization's id, which does not move: organizations name their providers by alias.
      delete fields.organizationId;
      const alias = fields.alias ?? '';
      // Never looked up (PostgreSQL cannot even compare a NUL): checkProvider would refuse it anyway.
      if (/[\x00-\x1f\x7f]/.test(alias)) throw new ValidationError('alias must not contain control characters');
      if (seen.has(alias)) return refuse('listed twice: the first entry was imported');
      seen.add(alias);
      const secret = fields.config?.clientSecret;
      if (secret !== undefined && VAULT_REFERENCE.test(secret)) {
        return refuse(`its clientSecret is a reference to Keycloak's vault (${secret.length > 60 ? `${secret.slice(0, 60)}...` : secret}), which Realmgate cannot read: put the secret itself in the file and import again`);
      }
      const notes: string[] = [];
      if (o.storeToken === true) notes.push("storeToken true: Realmgate does not store the provider's tokens (they are used once, at sign-in)");
      if (o.addReadTokenRoleOnCreate === true) notes.push("addReadTokenRoleOnCreate: no broker read-token role (no tokens are stored to read)");
      const first = o.firstBrokerLoginFlowAlias;
      if (typeof first === 'string' && first !== '' && first !== 'first broker login') {
        notes.push(`first login flow ${JSON.stringify(first)} is not run: Realmgate's first login through a provider is Keycloak's default one (a new user, or an existing one linked once they sign in)`);
      }
      if (providerId === 'google') {
        // Keycloak's Google provider options (GoogleIdentityProviderConfig) that change nothing here.
        if (fields.config?.offlineAccess === 'true') notes.push("offlineAccess: Google's refresh token is not asked for (Realmgate does not store the provider's tokens)");
        if (fields.config?.userIp === 'true') notes.push("userIp: the user's address is not sent to Google's userinfo endpoint (Google no longer reads it)");
      }
      const post = o.postBrokerLoginFlowAlias;
      if (typeof post === 'string' && post !== '') notes.push(`post login flow ${JSON.stringify(post)} is not run`);
      return { name, element, fields, ...(secret === SECRET_MASK ? { masked: true } : {}), notes };
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return refuse(message(err));
    }
  });
}

/** The organization a provider of the file belongs to (organizations[].identityProviders), as the import stored it. */
export interface ProviderOrganization {
  alias: string;
  /** Its id, when the organization was imported. */
  id?: string;
  /** Its domains as stored (a wildcard domain does not move). */
  domains?: string[];
  /** Other organizations of the file that list the provider too. */
  others?: string[];
}

/** What became of each provider of the file: stored (its id), or why not. */
export type ProviderOutcomes = Map<string, { stored: IdentityProvider } | { reason: string }>;

/**
 * Stores the providers read by readFileProviders (the realm import: the realm is new; partialImport:
 * `existing` says whether one stored already is left as it is or replaced, keeping its id, users' links
 * and, when the file's secret is masked, its secret). Each is checked by the admin API's rules
 * (checkProvider) before it is written: one refused is reported and the import goes on.
 */
export async function storeFileProviders(
  store: Store,
  realmId: string,
  entries: FileProvider[],
  opts: { organizationOf?: (alias: string) => ProviderOrganization | undefined; existing?: 'skip' | 'overwrite' },
  report: RealmReportBuilder,
  actor: Actor,
): Promise<{ outcomes: ProviderOutcomes; results: Array<{ entry: FileProvider; action: 'ADDED' | 'OVERWRITTEN' | 'SKIPPED'; id?: string; reason?: string }> }> {
  const outcomes: ProviderOutcomes = new Map();
  const results: Array<{ entry: FileProvider; action: 'ADDED' | 'OVERWRITTEN' | 'SKIPPED'; id?: string; reason?: string }> = [];
  const skip = (e: FileProvider, reason: string): void => {
    report.skipped(e.element, reason);
    const alias = e.fields?.alias ?? e.name;
    if (!outcomes.has(alias)) outcomes.set(alias, { reason });
    results.push({ entry: e, action: 'SKIPPED', reason });
  };
  for (const e of entries) {
    if (e.refused !== undefined || !e.fields) {
      skip(e, e.refused ?? 'not read');
      continue;
    }
    const alias = e.fields.alias ?? '';
    const notes = [...e.notes];
    const config = { ...e.fields.config };
    const fields: ProviderFields = { ...e.fields, config };
    const existing = await store.identityProviders.get(realmId, alias);
    if (existing && opts.existing !== 'overwrite') {
      skip(e, 'an identity provider with this alias exists already');
      continue;
    }
    if (!existing && e.masked) {
      skip(e, "its clientSecret is masked (**********): export with kc.sh export (or realmgate realm export --with-secrets), which writes it, or put the secret in the file");
      continue;
    }
    const org = opts.organizationOf?.(alias);
    let inOrg: string | undefined;
    if (org?.id !== undefined) {
      fields.organizationId = org.id;
      inOrg = org.alias;
      // Keycloak's kc.org.domain is one of the organization's domains (or ANY): one that did not move (a
      // wildcard) is left out, the provider stays in the organization.
      const domain = config[ORG_DOMAIN_KEY];
      if (domain && domain !== 'ANY' && !(org.domains ?? []).some((d) => d.toLowerCase() === domain.toLowerCase())) {
        delete config[ORG_DOMAIN_KEY];
        notes.push(`config ${ORG_DOMAIN_KEY} ${JSON.stringify(domain)} left out: not a domain organization ${org.alias} has here`);
      }
      if (org.others && org.others.length > 0) notes.push(`organizations ${org.others.join(', ')} list it too: a provider belongs to one organization, ${org.alias}`);
      // Keycloak's organization login asks for the email first and sends its domain's users to the provider.
      if (config[ORG_REDIRECT_KEY] === 'true') notes.push(`${ORG_REDIRECT_KEY}: an email of ${config[ORG_DOMAIN_KEY] === 'ANY' ? 'a domain of the organization' : config[ORG_DOMAIN_KEY] ? JSON.stringify(config[ORG_DOMAIN_KEY]) : 'no domain (kc.org.domain left out: nothing is routed)'} typed on the login page goes to this provider`);
    } else if (org) {
      notes.push(`its organization ${org.alias} was not imported: the provider belongs to none`);
    } else if (existing) {
      // partialImport names no organization: the provider stays in its own.
      fields.organizationId = existing.organizationId;
    }
    let p: IdentityProvider;
    try {
      p = await checkProvider(store, realmId, fields, existing ? { ...existing, displayName: null, organizationId: null, enabled: true, hideOnLogin: false, trustEmail: false, linkOnly: false } : undefined);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      skip(e, message(err));
      continue;
    }
    if (existing) await store.identityProviders.update(p);
    else await store.identityProviders.create(p);
    await recordAdminEvent(store, { ...actor, via: 'import' }, { realmId, operation: existing ? 'UPDATE' : 'CREATE', resourceType: 'IDENTITY_PROVIDER', resourcePath: `identity-provider/instances/${alias}`, representation: { ...fields, config: { ...config, clientSecret: undefined } } });
    outcomes.set(alias, { stored: p });
    results.push({ entry: e, action: existing ? 'OVERWRITTEN' : 'ADDED', id: p.id });
    const what = `${p.providerId}${inOrg ? `, of organization ${inOrg}` : ''}${p.enabled ? '' : ', disabled'}`;
    if (notes.length > 0) report.mapped(e.element, `${what}; ${notes.join('; ')}`);
    else report.imported(e.element, what);
  }
  return { outcomes, results };
}

/** A user's link to an account at a provider (Keycloak's FederatedIdentityRepresentation), read. */
export interface FileLink {
  provider: string;
  userId: string;
  userName: string | null;
}

/**
 * A user's federatedIdentities, read (their types are checked by the caller, which refuses the user for
 * one of the wrong type): a link without a provider or account id, or with text Realmgate does not store,
 * is a line of its own, and the user moves without it.
 */
export function readFileLinks(entries: Array<{ identityProvider?: string; userId?: string; userName?: string }>, element: string): { links: FileLink[]; parts: ReportLine[] } {
  const links: FileLink[] = [];
  const parts: ReportLine[] = [];
  entries.forEach((f, i) => {
    const at = `${element} identity provider link ${f.identityProvider ? f.identityProvider : `#${i + 1}`}`;
    try {
      if (!f.identityProvider) throw new ValidationError('no identityProvider');
      if (!f.userId) throw new ValidationError("no userId (the account's id at the provider)");
      checkText('userId', f.userId, 255);
      if (f.userName) checkText('userName', f.userName, 255);
      if (links.some((l) => l.provider === f.identityProvider)) throw new ValidationError('a second link to the same provider: the first was kept');
      links.push({ provider: f.identityProvider, userId: f.userId, userName: f.userName || null });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      parts.push({ element: at, outcome: 'skipped', reason: message(err) });
    }
  });
  return { links, parts };
}

/**
 * Makes the links of the users stored (each user once, by id) to the providers of the realm. A link to a
 * provider that is not there is reported once per provider with the users it concerns; an account linked
 * to another user already (listed twice, or stored before) is reported and left out. Returns, per user
 * id, the links left out (partialImport's answer says them).
 */
export async function storeFileLinks(
  store: Store,
  realmId: string,
  users: Array<{ name: string; userId: string; links: FileLink[] }>,
  providerOf: (alias: string) => { ok: true } | { reason: string },
  report: RealmReportBuilder,
  now: number,
): Promise<Map<string, string[]>> {
  const leftOut = new Map<string, string[]>();
  const linked = new Map<string, number>();
  const notLinked = new Map<string, { reason: string; who: string[] }>();
  const accounts = new Set<string>();
  const leave = (userId: string, what: string): void => void leftOut.set(userId, [...(leftOut.get(userId) ?? []), what]);
  for (const u of users) {
    for (const l of u.links) {
      const p = providerOf(l.provider);
      if ('reason' in p) {
        const n = notLinked.get(l.provider) ?? { reason: p.reason, who: [] };
        n.who.push(u.name);
        notLinked.set(l.provider, n);
        leave(u.userId, `link to ${l.provider} (${p.reason})`);
        continue;
      }
      const key = JSON.stringify([l.provider, l.userId]);
      const stored = accounts.has(key) ? undefined : await store.identityProviders.findLink(realmId, l.provider, l.userId);
      const other = accounts.has(key) ? 'another user of the file' : stored ? `user ${(await store.users.get(stored.userId))?.username ?? stored.userId}` : undefined;
      if (other !== undefined) {
        const reason = `the ${l.provider} account ${l.userId} is linked to ${other} already`;
        report.skipped(`user ${u.name} identity provider link ${l.provider}`, reason);
        leave(u.userId, `link to ${l.provider} (${reason})`);
        continue;
      }
      accounts.add(key);
      await store.identityProviders.link({ realmId, identityProvider: l.provider, federatedUserId: l.userId, federatedUsername: l.userName, userId: u.userId, createdAt: now });
      linked.set(l.provider, (linked.get(l.provider) ?? 0) + 1);
    }
  }
  for (const [alias, n] of linked) report.imported(`links to identity provider ${alias}`, `${n} user(s) linked to their accounts there: they sign in through it as before`);
  for (const [alias, n] of notLinked) {
    const names = n.who.length > 5 ? `${n.who.slice(0, 5).join(', ')}, ...` : n.who.join(', ');
    report.skipped(`links to identity provider ${alias}`, `${n.who.length} user(s) (${names}): ${n.reason}`);
  }
  return leftOut;
}

/**
 * Keycloak's identityProviderMappers (the realm's list, each naming its provider by alias), stored after
 * the providers, roles and groups they name: a mapper of a type Realmgate applies (identity-provider-
 * mappers.ts MAPPER_TYPES) is checked by the admin API's rules and stored; one of another type, of a
 * provider that did not move, naming a role or group the realm does not have, or a name listed twice for
 * its provider is a line of the report, never a failed import.
 */
export async function storeFileProviderMappers(store: Store, realmId: string, list: unknown[], report: RealmReportBuilder, actor: Actor): Promise<void> {
  const stored = new Map<string, string[]>();
  for (const [i, raw] of list.entries()) {
    const m = isObject(raw) ? raw : {};
    const alias = typeof m.identityProviderAlias === 'string' && m.identityProviderAlias !== '' ? m.identityProviderAlias : undefined;
    const name = typeof m.name === 'string' && m.name !== '' ? m.name : `#${i + 1} of identityProviderMappers`;
    const element = `mapper ${name} of identity provider ${alias ?? '?'}`;
    try {
      if (!isObject(raw)) throw new ValidationError('the entry must be an object');
      if (!alias) throw new ValidationError('no identityProviderAlias');
      const fields = readProviderMapper(raw);
      const type = fields.identityProviderMapper ?? '';
      if (!MAPPER_TYPES.some((t) => t.id === type)) {
        report.skipped(element, `type ${JSON.stringify(type.slice(0, 100))} is not one Realmgate applies (${MAPPER_TYPES.map((t) => t.id).join(', ')})`);
        continue;
      }
      // Never looked up (PostgreSQL cannot even compare a NUL): no provider has such an alias.
      const p = /[\x00-\x1f\x7f]/.test(alias) ? undefined : await store.identityProviders.get(realmId, alias);
      if (!p) {
        report.skipped(element, 'its identity provider was not imported');
        continue;
      }
      const mapper = await checkMapper(store, p, { ...fields, identityProviderAlias: alias });
      // Looked for before the insert: a unique violation would end the import's PostgreSQL transaction.
      if ((await store.identityProviders.mappers(realmId, alias)).some((x) => x.name === mapper.name)) throw new ConflictError('taken');
      await store.identityProviders.createMapper(mapper);
      await recordAdminEvent(store, { ...actor, via: 'import' }, { realmId, operation: 'CREATE', resourceType: 'IDENTITY_PROVIDER_MAPPER', resourcePath: `identity-provider/instances/${alias}/mappers/${mapper.id}`, representation: { name: mapper.name, identityProviderMapper: mapper.type, config: mapper.config } });
      stored.set(alias, [...(stored.get(alias) ?? []), `${mapper.name} (${mapper.type})`]);
    } catch (err) {
      if (err instanceof ConflictError) report.skipped(element, 'a second mapper of this name for the provider: the first was imported');
      else if (err instanceof ValidationError) report.skipped(element, message(err));
      else throw err;
    }
  }
  for (const [alias, names] of stored) {
    const shown = names.length > 10 ? `${names.slice(0, 10).join(', ')}, ...` : names.join(', ');
    report.imported(`mappers of identity provider ${alias}`, `${names.length} mapper(s): ${shown}; applied at sign-ins through the provider`);
  }
}
