import { isIP } from 'node:net';
import type { Client, Entry } from 'ldapts';
import { escapeFilterValue, isAttributeName } from './escape.js';

/**
 * One conversation with an LDAP directory for one sign-in (RFC 4511): connect (ldaps://, or ldap://
 * with StartTLS, certificates verified by Node's trust store, which NODE_EXTRA_CA_CERTS extends), bind
 * as the provider's service account (or not at all when authType is none), search the user, then bind
 * as the user's entry with the typed password. ldapts is loaded on first use only: a server whose
 * realms have no LDAP never loads it.
 */

/** The directory cannot answer now (unreachable, silent, TLS refused, service account refused): try again later. */
export class LdapUnavailable extends Error {}

/** Keycloak's LDAP provider config, read once per sign-in (LDAPConstants names). */
export interface LdapSettings {
  url: string;
  usersDn: string;
  bindDn: string;
  /** authType "none": no service bind, the search runs anonymously. */
  anonymous: boolean;
  startTls: boolean;
  usernameAttribute: string;
  uuidAttribute: string;
  objectClasses: string[];
  /** searchScope 1: one level under usersDn; 2: the whole subtree. */
  scope: 'one' | 'sub';
  customFilter: string | undefined;
  connectTimeoutMs: number;
  operationTimeoutMs: number;
}

export type LdapLookup =
  | { kind: 'found'; dn: string; attributes: Record<string, string[]> }
  | { kind: 'not-found' }
  | { kind: 'wrong-password' }
  | { kind: 'ambiguous' };

let ldapts: Promise<typeof import('ldapts')> | undefined;
function loadLdapts(): Promise<typeof import('ldapts')> {
  ldapts ??= import('ldapts');
  return ldapts;
}

/** Whether ldapts was ever loaded in this process (an idle server must not: tests check it). */
export function ldapClientLoaded(): boolean {
  return ldapts !== undefined;
}

/** Each step is bounded; the whole conversation too (a server that trickles answers cannot hold a sign-in). */
const MAX_TOTAL_MS = 8_000;

/**
 * A client of the provider's URL for one conversation, `fn`, unbound after it. With `steps`, the whole
 * conversation must end within the connect timeout and that many operation timeouts (at most 8 s).
 */
async function withClient<T>(s: LdapSettings, o: { steps?: number; operationTimeoutMs?: number }, fn: (client: Client, ldap: typeof import('ldapts')) => Promise<T>): Promise<T> {
  const ldap = await loadLdapts();
  // ldapts speaks TLS from the start whenever tlsOptions are given: only for ldaps:// (StartTLS upgrades later).
  const secure = s.url.toLowerCase().startsWith('ldaps://');
  const client = new ldap.Client({ url: s.url, connectTimeout: s.connectTimeoutMs, timeout: o.operationTimeoutMs ?? s.operationTimeoutMs, strictDN: false, ...(secure ? { tlsOptions: { minVersion: 'TLSv1.2' as const } } : {}) });
  let timer: NodeJS.Timeout | undefined;
  try {
    if (o.steps === undefined) return await fn(client, ldap);
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LdapUnavailable('the directory did not answer in time')), Math.min(MAX_TOTAL_MS, s.connectTimeoutMs + o.steps! * s.operationTimeoutMs));
    });
    return await Promise.race([fn(client, ldap), deadline]);
  } finally {
    clearTimeout(timer);
    client.unbind().catch(() => undefined);
  }
}

/**
 * The entry `login` names (by usernameLDAPAttribute, or by mail when `byEmail`), checked with `password`
 * by a bind as that entry. The password is never empty here: RFC 4513 5.1.2, a simple bind with a DN
 * and an empty password is an unauthenticated bind, which servers answer with success.
 */
export async function lookupAndBind(s: LdapSettings, bindCredential: string | undefined, login: { value: string; byEmail: boolean }, password: string, attributes: string[]): Promise<LdapLookup> {
  if (password === '') return { kind: 'wrong-password' };
  if (!nameable(login.value)) return { kind: 'not-found' };
  const filter = userFilter(s, login);
  return withClient(s, { steps: 4 }, (client) => converse(client, s, bindCredential, filter, password, attributes));
}

/**
 * The entry `login` names, found by the service account without any password (a sign-in that proved
 * itself otherwise, with a passkey, still needs the directory to have the user: Keycloak validates a
 * federated user against its provider whenever it loads one).
 */
export async function lookupEntry(s: LdapSettings, bindCredential: string | undefined, login: { value: string; byEmail: boolean }, attributes: string[]): Promise<LdapLookup> {
  if (!nameable(login.value)) return { kind: 'not-found' };
  const filter = userFilter(s, login);
  return withClient(s, { steps: 3 }, (client) => converse(client, s, bindCredential, filter, undefined, attributes));
}

/** `password` undefined: the entry only, no bind as the user (lookupEntry). */
async function converse(client: Client, s: LdapSettings, bindCredential: string | undefined, filter: string, password: string | undefined, attributes: string[]): Promise<LdapLookup> {
  await serviceBind(client, s, bindCredential);
  let entries: Entry[];
  try {
    // Two are enough to tell one entry from several (more than one is a failure, never a choice).
    const r = await client.search(s.usersDn, { scope: s.scope, filter, sizeLimit: 2, attributes: [...new Set(['dn', ...attributes])] });
    entries = r.searchEntries;
  } catch (err) {
    // RFC 4511 4.1.9 sizeLimitExceeded (4): more entries matched than the two asked for.
    if (resultCode(err) === 4) return { kind: 'ambiguous' };
    throw unavailable('search', err);
  }
  if (entries.length === 0) return { kind: 'not-found' };
  if (entries.length > 1) return { kind: 'ambiguous' };
  const entry = entries[0]!;
  if (password === undefined) return { kind: 'found', dn: entry.dn, attributes: stringAttributes(entry) };
  try {
    await client.bind(entry.dn, password);
  } catch (err) {
    const code = resultCode(err);
    // RFC 4511 4.1.9: invalidCredentials (49), or a refusal of this account (inappropriateAuthentication 48,
    // unwillingToPerform 53: Active Directory's disabled or locked accounts): a failed sign-in, not an outage.
    if (code === 49 || code === 48 || code === 53 || code === 50) return { kind: 'wrong-password' };
    throw unavailable('user bind', err);
  }
  return { kind: 'found', dn: entry.dn, attributes: stringAttributes(entry) };
}

async function serviceBind(client: Client, s: LdapSettings, bindCredential: string | undefined): Promise<void> {
  try {
    if (s.startTls) {
      const host = new URL(s.url).hostname.replace(/^\[(.*)\]$/, '$1');
      // Node checks the certificate against the host given here (a bare socket would be checked against
      // "localhost"); SNI only for a name (RFC 6066 3: never an address).
      await client.startTLS({ host, ...(isIP(host) ? {} : { servername: host }), minVersion: 'TLSv1.2' });
    }
    if (s.anonymous) return;
    // The same rule as for users: an empty bind password would be an unauthenticated bind (RFC 4513 5.1.2).
    if (!bindCredential) throw new LdapUnavailable('the provider has no bind credential');
    await client.bind(s.bindDn, bindCredential);
  } catch (err) {
    throw unavailable('connect or service bind', err);
  }
}

function resultCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function unavailable(step: string, err: unknown): LdapUnavailable {
  if (err instanceof LdapUnavailable) return err;
  const code = resultCode(err);
  return new LdapUnavailable(`${step} failed: ${(err as Error)?.name ?? 'Error'}${code !== undefined ? ` (LDAP result ${code})` : ''}: ${String((err as Error)?.message ?? err).slice(0, 200)}`);
}

/**
 * Whether a value can be asked for in a filter. A NUL is escaped as RFC 4515 says (`\00`), but OpenLDAP
 * ends the assertion value there: `(memberUid=pat\00\2a)` found pat's groups (seen 2026-11-29, the
 * filter fuzz test). No directory name holds a NUL, so a value with one names no entry and is not asked.
 */
export const nameable = (value: string): boolean => !value.includes('\0');

/** RFC 4515: (&(objectClass=a)(objectClass=b)(uid=<escaped>)[custom filter]). */
export function userFilter(s: Pick<LdapSettings, 'objectClasses' | 'usernameAttribute' | 'customFilter'>, login: { value: string; byEmail: boolean }): string {
  const attr = login.byEmail ? 'mail' : s.usernameAttribute;
  const parts = s.objectClasses.map((c) => `(objectClass=${escapeFilterValue(c)})`);
  parts.push(`(${attr}=${escapeFilterValue(login.value)})`);
  if (s.customFilter) parts.push(s.customFilter);
  return `(&${parts.join('')})`;
}

function stringAttributes(entry: Entry): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(entry)) {
    if (name === 'dn') continue;
    const list = Array.isArray(value) ? value : [value];
    const strings = list.filter((v): v is string => typeof v === 'string');
    if (strings.length > 0) out[name.toLowerCase()] = strings;
  }
  return out;
}

/** A configured attribute name, checked (it goes into filters and attribute lists unescaped). */
export function attributeName(value: string | undefined, fallback: string): string {
  const v = (value ?? '').trim();
  return v !== '' && isAttributeName(v) ? v : fallback;
}

/**
 * Keycloak's testLDAPConnection: `testConnection` connects (and upgrades with StartTLS when asked);
 * `testAuthentication` also binds as the service account. Throws LdapUnavailable with the reason.
 */
export async function testDirectory(s: LdapSettings, bindCredential: string | undefined, action: 'testConnection' | 'testAuthentication'): Promise<void> {
  try {
    await withClient(s, { steps: 2 }, async (client) => {
      await serviceBind(client, action === 'testAuthentication' ? s : { ...s, anonymous: true, startTls: s.startTls }, bindCredential);
      // A bare connect: an anonymous bind with no name proves the directory answers LDAP (RFC 4513 5.1.1).
      if (action === 'testConnection' || s.anonymous) await client.bind('', '');
    });
  } catch (err) {
    throw unavailable(action, err);
  }
}

/** Keycloak's LDAPCapabilityRepresentation: an OID the directory's root DSE lists, and which list. */
export interface LdapCapability {
  oid: string;
  type: 'CONTROL' | 'EXTENSION' | 'FEATURE';
}

const CAPABILITY_LISTS = [
  ['supportedControl', 'CONTROL'],
  ['supportedExtension', 'EXTENSION'],
  ['supportedFeatures', 'FEATURE'],
] as const;

/**
 * Keycloak's queryServerCapabilities: the controls, extended operations and features the directory's
 * root DSE lists (RFC 4512 5.1: supportedControl, supportedExtension, supportedFeatures), read after the
 * provider's own bind (or anonymously under authType none). The password modify extension
 * (1.3.6.1.4.1.4203.1.11.1, RFC 3062) among them is what usePasswordModifyExtendedOp needs.
 */
export async function serverCapabilities(s: LdapSettings, bindCredential: string | undefined): Promise<LdapCapability[]> {
  try {
    return await withClient(s, { steps: 2 }, async (client) => {
      await serviceBind(client, s, bindCredential);
      const r = await client.search('', { scope: 'base', filter: '(objectClass=*)', attributes: CAPABILITY_LISTS.map(([a]) => a), sizeLimit: 1 });
      const entry = r.searchEntries[0];
      const attrs = entry ? stringAttributes(entry) : {};
      const out: LdapCapability[] = [];
      for (const [attr, type] of CAPABILITY_LISTS) for (const oid of new Set(attrs[attr.toLowerCase()] ?? [])) out.push({ oid, type });
      return out;
    });
  } catch (err) {
    throw unavailable('reading the server capabilities', err);
  }
}

/** The most entries one synchronization reads (a directory larger than this is synchronized in part, and says so). */
export const MAX_SYNC_ENTRIES = 50_000;

/**
 * Every user entry under usersDn (Keycloak's full sync), or those modified since `since` (seconds; its
 * changed-users sync, by modifyTimestamp, RFC 4512 3.4), read in pages of 500 (RFC 2696). No user bind:
 * a synchronization copies profiles, never passwords.
 */
export async function listEntries(s: LdapSettings, bindCredential: string | undefined, attributes: string[], since?: number): Promise<{ entries: Array<{ dn: string; attributes: Record<string, string[]> }>; truncated: boolean }> {
  const parts = s.objectClasses.map((c) => `(objectClass=${escapeFilterValue(c)})`);
  if (since !== undefined) parts.push(`(modifyTimestamp>=${generalizedTime(since)})`);
  if (s.customFilter) parts.push(s.customFilter);
  try {
    return await withClient(s, { operationTimeoutMs: Math.max(s.operationTimeoutMs, 30_000) }, async (client) => {
      await serviceBind(client, s, bindCredential);
      const r = await client.search(s.usersDn, { scope: s.scope, filter: `(&${parts.join('')})`, attributes: [...new Set(['dn', ...attributes])], paged: { pageSize: 500 }, sizeLimit: MAX_SYNC_ENTRIES + 1 });
      const entries = r.searchEntries.slice(0, MAX_SYNC_ENTRIES).map((e) => ({ dn: e.dn, attributes: stringAttributes(e) }));
      return { entries, truncated: r.searchEntries.length > MAX_SYNC_ENTRIES };
    });
  } catch (err) {
    if (resultCode(err) === 4) throw new LdapUnavailable(`more than ${MAX_SYNC_ENTRIES} entries: narrow usersDn or customUserSearchFilter`);
    throw unavailable('synchronization', err);
  }
}

/** RFC 4517 3.3.13 GeneralizedTime in UTC: YYYYMMDDHHMMSSZ. */
function generalizedTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** The directory refused the new password (RFC 4511 constraintViolation 19, e.g. its own password policy). */
export class LdapPasswordRefused extends Error {}

/** A BER length (X.690 8.1.3): short form under 128, else long form. */
function berLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const berTagged = (tag: number, value: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), berLength(value.length), value]);

/** RFC 3062 2: PasswdModifyRequestValue ::= SEQUENCE { userIdentity [0] OCTET STRING, newPasswd [2] OCTET STRING }. */
export function passwordModifyValue(dn: string, newPassword: string): Buffer {
  return berTagged(0x30, Buffer.concat([berTagged(0x80, Buffer.from(dn, 'utf8')), berTagged(0x82, Buffer.from(newPassword, 'utf8'))]));
}

/**
 * Sets an entry's password (editMode WRITABLE), as the service account: with the password modify extended
 * operation (RFC 3062; usePasswordModifyExtendedOp: the directory hashes it by its own policy), or by
 * replacing userPassword. Throws LdapPasswordRefused when the directory refuses the value, LdapUnavailable
 * when it cannot be reached.
 */
export async function changePassword(s: LdapSettings, bindCredential: string | undefined, dn: string, newPassword: string, o: { exop: boolean }): Promise<void> {
  if (newPassword === '') throw new LdapPasswordRefused('an empty password');
  await withClient(s, {}, async (client, ldap) => {
    await serviceBind(client, s, bindCredential);
    try {
      if (o.exop) await client.exop('1.3.6.1.4.1.4203.1.11.1', passwordModifyValue(dn, newPassword));
      else await client.modify(dn, new ldap.Change({ operation: 'replace', modification: new ldap.Attribute({ type: 'userPassword', values: [newPassword] }) }));
    } catch (err) {
      const code = resultCode(err);
      if (code === 19 || code === 21) throw new LdapPasswordRefused('the directory refused the new password');
      throw unavailable('password change', err);
    }
  });
}

/** The most directory groups one mapper reads (a sign-in: the user's; a sync: all of them). */
export const MAX_GROUP_ENTRIES = 5_000;

/**
 * The entries under `base` (the whole subtree) matching `filter`, read by the service account in pages
 * of 500 (RFC 2696). More than `max` is an error (LdapUnavailable, saying so): a bounded answer, never
 * a silently cut one, since a cut list of groups would take memberships away.
 */
export async function searchEntries(s: LdapSettings, bindCredential: string | undefined, q: { base: string; filter: string; attributes: string[]; max: number }): Promise<Array<{ dn: string; attributes: Record<string, string[]> }>> {
  try {
    return await withClient(s, { operationTimeoutMs: Math.max(s.operationTimeoutMs, 10_000) }, async (client) => {
      await serviceBind(client, s, bindCredential);
      const r = await client.search(q.base, { scope: 'sub', filter: q.filter, attributes: [...new Set(['dn', ...q.attributes])], paged: { pageSize: 500 }, sizeLimit: q.max + 1 });
      if (r.searchEntries.length > q.max) throw new LdapUnavailable(`more than ${q.max} entries under ${q.base}: narrow the mapper's filter`);
      return r.searchEntries.map((e) => ({ dn: e.dn, attributes: stringAttributes(e) }));
    });
  } catch (err) {
    if (resultCode(err) === 4) throw new LdapUnavailable(`more than ${q.max} entries under ${q.base}: narrow the mapper's filter`);
    // noSuchObject (32): the base is not there; a mapper's memberships are never emptied on that.
    if (resultCode(err) === 32) throw new LdapUnavailable(`${q.base} does not exist in the directory`);
    throw unavailable('group search', err);
  }
}
