import type { OrganizationDetails, OrganizationDomain } from '../../../storage/repos/organization-admin.js';
import type { User } from '../../../storage/types.js';
import { ValidationError } from '../../validation.js';
import { asObject, optArray, optBoolean, optString } from '../read-json.js';
import { toUserRepresentation, type UserRepresentation } from './user.js';

/** Keycloak 26's OrganizationRepresentation. */
export interface OrganizationRepresentation {
  id: string;
  name: string;
  alias: string;
  description: string;
  enabled: boolean;
  /** Left out when there is none, as Keycloak leaves out a null. */
  redirectUrl?: string;
  attributes: Record<string, string[]>;
  domains: Array<{ name: string; verified: boolean }>;
}

export function toOrganizationRepresentation(o: OrganizationDetails): OrganizationRepresentation {
  return { id: o.id, name: o.name, alias: o.alias, description: o.description, enabled: o.enabled, ...(o.redirectUrl ? { redirectUrl: o.redirectUrl } : {}), attributes: {}, domains: o.domains.map((d) => ({ name: d.name, verified: d.verified })) };
}

/** A MemberRepresentation: a user plus how they joined (Realmgate has no identity brokering: unmanaged). */
export function toMemberRepresentation(u: User): UserRepresentation & { membershipType: 'UNMANAGED' } {
  return { ...toUserRepresentation(u, { brief: true }), membershipType: 'UNMANAGED' };
}

export interface OrganizationInput {
  name?: string;
  alias?: string;
  description?: string;
  enabled?: boolean;
  /** '' or null: none. */
  redirectUrl?: string | null;
  domains?: OrganizationDomain[];
}

function readDomains(o: Record<string, unknown>): OrganizationDomain[] | undefined {
  const list = optArray(o, 'domains');
  if (list === undefined) return undefined;
  return list.map((d) => {
    // Keycloak accepts a domain as {name, verified}; a bare string is read as the name.
    if (typeof d === 'string') return { name: d, verified: false };
    const r = asObject(d, 'organization domain');
    const name = optString(r, 'name');
    if (name === undefined) throw new ValidationError('every domain needs a name');
    return { name, verified: optBoolean(r, 'verified') ?? false };
  });
}

export function readOrganization(body: unknown): OrganizationInput {
  const o = asObject(body, 'organization');
  const name = optString(o, 'name');
  const alias = optString(o, 'alias');
  const description = optString(o, 'description');
  const enabled = optBoolean(o, 'enabled');
  const redirectUrl = o.redirectUrl === null ? null : optString(o, 'redirectUrl');
  const domains = readDomains(o);
  return {
    ...(redirectUrl !== undefined ? { redirectUrl } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(alias !== undefined ? { alias } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(enabled !== undefined ? { enabled } : {}),
    ...(domains !== undefined ? { domains } : {}),
  };
}

/**
 * The body of "add member": keycloak-admin-client sends the user id as a bare JSON string ("\"<id>\"");
 * a plain text id, or {"id": ...}, are read the same way.
 */
export function readMemberId(body: unknown): string {
  if (typeof body === 'string' && body.trim() !== '') {
    const t = body.trim();
    if (t.startsWith('"')) {
      try {
        const v: unknown = JSON.parse(t);
        if (typeof v === 'string' && v !== '') return v;
      } catch {
        // fall through to the error below
      }
      throw new ValidationError('the body must be the user id as a JSON string');
    }
    return t;
  }
  if (body && typeof body === 'object' && typeof (body as { id?: unknown }).id === 'string') return (body as { id: string }).id;
  throw new ValidationError('the body must be the user id as a JSON string');
}
