import type { Store } from '../../storage/store.js';
import type { ScopeOwner } from '../../storage/repos/role-scopes.js';
import { ValidationError } from '../validation.js';
import type { RealmReportBuilder } from './import-report.js';

/**
 * Keycloak's role scope mappings in a realm export (RealmRepresentation): `scopeMappings`, the realm roles
 * in the scope of a client (`client`) or of a client scope (`clientScope`), and `clientScopeMappings`, by
 * the clientId of the client owning the roles, the client roles in the scope of a client or client scope
 * (ExportUtils.exportRealm writes them so; RepresentationToModel.importRealm and createClientScopeMappings
 * read them back, trimming each role name).
 */
export interface FileScopeMapping {
  /** Where the entry is in the file, for a line about the entry itself ("scopeMappings[2]"). */
  at: string;
  owner: ScopeOwner;
  /** '' for realm roles (scopeMappings), else the clientId owning the roles (clientScopeMappings' key). */
  roleClient: string;
  roles: string[];
}

/** An entry that cannot be read: skipped, its line saying why. */
export interface RefusedScopeMapping {
  at: string;
  refused: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

function readEntry(raw: unknown, at: string, roleClient: string): FileScopeMapping | RefusedScopeMapping {
  if (!isObject(raw)) return { at, refused: `must be an object, not ${kindOf(raw)}` };
  const name = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v === '' || /[\x00-\x1f\x7f]/.test(v)) throw new ValidationError(`${key} must be a name, not ${typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : kindOf(v)}`);
    return v;
  };
  try {
    const client = name('client');
    const clientScope = name('clientScope');
    if (client === undefined && clientScope === undefined) {
      // Keycloak before 4 named client templates (clientTemplate), which became client scopes.
      if (raw.clientTemplate !== undefined) return { at, refused: 'a clientTemplate (Keycloak before 4.0): not moved; name the client scope (clientScope)' };
      return { at, refused: 'names neither a client nor a clientScope' };
    }
    const rolesRaw = raw.roles ?? [];
    if (!Array.isArray(rolesRaw)) throw new ValidationError(`roles must be a list, not ${kindOf(rolesRaw)}`);
    const roles = rolesRaw.map((r, i) => {
      if (typeof r !== 'string') throw new ValidationError(`roles[${i}] must be a string, not ${kindOf(r)}`);
      if (r.includes('\u0000')) throw new ValidationError(`roles[${i}] contains a NUL character`);
      return r.trim();
    });
    // Keycloak reads client first (getScopeContainerHavingScope).
    const owner: ScopeOwner = client !== undefined ? { kind: 'client', id: client } : { kind: 'scope', id: clientScope! };
    return { at, owner, roleClient, roles: [...new Set(roles)].filter((r) => r !== '') };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { at, refused: err.message };
  }
}

/**
 * Reads the realm's scopeMappings and clientScopeMappings (no database). A section of the wrong type (a
 * list that is not one, a map that is not one) throws a ValidationError, which fails the realm as the
 * realm's other lists do; an entry of the wrong type is refused alone.
 */
export function readFileScopeMappings(rep: Json): Array<FileScopeMapping | RefusedScopeMapping> {
  const out: Array<FileScopeMapping | RefusedScopeMapping> = [];
  const realmLevel = rep.scopeMappings;
  if (realmLevel !== undefined && realmLevel !== null) {
    if (!Array.isArray(realmLevel)) throw new ValidationError(`scopeMappings must be a list, not ${kindOf(realmLevel)}`);
    realmLevel.forEach((raw, i) => out.push(readEntry(raw, `scopeMappings[${i}]`, '')));
  }
  const byClient = rep.clientScopeMappings;
  if (byClient !== undefined && byClient !== null) {
    if (!isObject(byClient)) throw new ValidationError(`clientScopeMappings must be an object, not ${kindOf(byClient)}`);
    for (const [roleClient, list] of Object.entries(byClient)) {
      if (list === null) continue;
      if (!Array.isArray(list)) throw new ValidationError(`clientScopeMappings.${roleClient} must be a list, not ${kindOf(list)}`);
      // '' would read the entries' roles as realm roles: a key names the client owning the roles.
      list.forEach((raw, i) => out.push(roleClient === '' ? { at: `clientScopeMappings[""][${i}]`, refused: 'the key names no client' } : readEntry(raw, `clientScopeMappings.${roleClient}[${i}]`, roleClient)));
    }
  }
  return out;
}

/**
 * A role a scope mapping names: stored (its id; whether it is a composite, whose contents come with it
 * into the scope when a token is made), or why it is not there.
 */
export type ScopedRole = { id: string; composite: boolean } | { reason: string };

export interface ScopeMappingContext {
  /** Whether the owner was imported (or the realm has it): ok, or why its mappings are left out. */
  owner(owner: ScopeOwner): { ok: true; fullScopeAllowed?: boolean } | { reason: string };
  /** The role (realm role when client is ''), as the import stored it. */
  roles(client: string, name: string): ScopedRole;
}

const roleText = (client: string, name: string): string => (client === '' ? `realm role ${name}` : `client role ${name} of ${client}`);
const ownerText = (o: ScopeOwner): string => (o.kind === 'client' ? `client ${o.id}` : `client scope ${o.id}`);

/**
 * Stores the scope mappings read by readFileScopeMappings, once the clients, client scopes and roles are
 * stored: those whose owner and role were imported. A mapping to a composite is stored as a mapping to
 * the composite: a token of a client without full scope carries what it contains too (Keycloak's
 * TokenManager.getAccess expands the scope's composites, as roleScopes does), and a later change to the
 * composite reaches the scope.
 * One line per owner (its roles, or why they are left out), one per role left out. Returns how many
 * mappings were stored.
 */
export async function storeFileScopeMappings(store: Store, realmId: string, entries: Array<FileScopeMapping | RefusedScopeMapping>, ctx: ScopeMappingContext, report: RealmReportBuilder): Promise<number> {
  const byOwner = new Map<string, { owner: ScopeOwner; named: Array<[string, string]> }>();
  for (const e of entries) {
    if ('refused' in e) {
      report.skipped(`scope mapping ${e.at}`, e.refused);
      continue;
    }
    const key = `${e.owner.kind}:${e.owner.id}`;
    const g = byOwner.get(key) ?? { owner: e.owner, named: [] };
    for (const r of e.roles) g.named.push([e.roleClient, r]);
    byOwner.set(key, g);
  }
  let stored = 0;
  for (const { owner, named } of byOwner.values()) {
    const element = `scope mappings of ${ownerText(owner)}`;
    if (named.length === 0) continue;
    const state = ctx.owner(owner);
    if ('reason' in state) {
      const shown = named.slice(0, 10).map(([c, n]) => roleText(c, n)).join(', ');
      report.skipped(element, `${state.reason}; its ${named.length} role(s) left out: ${shown}${named.length > 10 ? ', ...' : ''}`);
      continue;
    }
    const ids = new Set<string>();
    const direct: string[] = [];
    const composites: string[] = [];
    const missing = new Map<string, string>();
    for (const [client, name] of named) {
      const r = ctx.roles(client, name);
      if ('reason' in r) {
        if (!missing.has(roleText(client, name))) missing.set(roleText(client, name), r.reason);
        continue;
      }
      if (ids.has(r.id)) continue;
      ids.add(r.id);
      direct.push(roleText(client, name));
      if (r.composite) composites.push(roleText(client, name));
    }
    await store.roleScopes.add(realmId, owner, [...ids]);
    stored += ids.size;
    if (ids.size > 0) {
      const notes = [direct.join(', ')];
      if (composites.length > 0) notes.push(`composite: ${composites.join(', ')} (what ${composites.length === 1 ? 'it contains comes' : 'they contain come'} into the scope with ${composites.length === 1 ? 'it' : 'them'}, as in Keycloak)`);
      // As in Keycloak: a client of full scope has every role of its user in its tokens anyway.
      if (state.fullScopeAllowed === true) notes.push('no effect while the client has fullScopeAllowed true');
      if (state.fullScopeAllowed === true) report.mapped(element, notes.join('; '));
      else report.imported(element, notes.join('; '));
    }
    for (const [role, reason] of missing) report.skipped(`scope mapping of ${ownerText(owner)} to ${role}`, reason);
  }
  return stored;
}
