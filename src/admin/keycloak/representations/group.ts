import type { Group } from '../../../storage/repos/groups.js';
import type { Role } from '../../../storage/repos/roles.js';

/** Keycloak 26's GroupRepresentation (admin API). */
export interface GroupRepresentation {
  id: string;
  name: string;
  description?: string;
  path: string;
  parentId?: string;
  subGroupCount: number;
  subGroups: GroupRepresentation[];
  attributes?: Record<string, string[]>;
  realmRoles?: string[];
  clientRoles?: Record<string, string[]>;
  access?: Record<string, boolean>;
}

/** Role names as a group representation lists them: realm roles, and client roles by client id. */
export function roleNames(roles: Role[]): { realmRoles: string[]; clientRoles: Record<string, string[]> } {
  const clientRoles: Record<string, string[]> = {};
  for (const r of roles) if (r.clientId !== '') (clientRoles[r.clientId] ??= []).push(r.name);
  return { realmRoles: roles.filter((r) => r.clientId === '').map((r) => r.name), clientRoles };
}

/**
 * A group as Keycloak answers it: brief (id, name, path, parentId, subGroupCount, subGroups) or full
 * (with attributes and the roles mapped to the group itself, `roles`).
 */
export function toGroupRepresentation(
  g: Group,
  o: { path: string; subGroupCount: number; subGroups?: GroupRepresentation[]; roles?: Role[]; access?: Record<string, boolean> },
): GroupRepresentation {
  return {
    id: g.id,
    name: g.name,
    ...(g.description ? { description: g.description } : {}),
    path: o.path,
    ...(g.parentId !== '' ? { parentId: g.parentId } : {}),
    subGroupCount: o.subGroupCount,
    subGroups: o.subGroups ?? [],
    ...(o.roles ? { attributes: g.attributes, ...roleNames(o.roles) } : {}),
    ...(o.access ? { access: o.access } : {}),
  };
}
