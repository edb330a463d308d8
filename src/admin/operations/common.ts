import os from 'node:os';
import type { Store } from '../../storage/store.js';
import type { Realm } from '../../storage/types.js';
import type { AdminOperation } from '../../storage/repos/admin-events.js';
import { sortableId } from '../../crypto/random.js';
import { NotFound } from '../validation.js';

export function now(): number {
  return Math.floor(Date.now() / 1000);
}

export async function requireRealm(store: Store, realmId: string): Promise<Realm> {
  const realm = await store.realms.get(realmId);
  if (!realm) throw new NotFound(`realm ${realmId} does not exist`);
  return realm;
}

/** Who makes an admin change, and through which door: recorded with every admin event. */
export interface Actor {
  via: 'api' | 'cli' | 'console' | 'import' | 'bootstrap';
  /** The realm whose user or service account acts (API and console callers). */
  realmId: string | null;
  userId: string | null;
  username: string | null;
  clientId: string | null;
  ip: string | null;
}

/** The operator at the command line: the account that ran the command, on this host. */
export function cliActor(): Actor {
  let username: string | null = null;
  try {
    username = os.userInfo().username;
  } catch {
    username = process.env.USER ?? null;
  }
  return { via: 'cli', realmId: null, userId: null, username, clientId: null, ip: null };
}

export const BOOTSTRAP_ACTOR: Actor = { via: 'bootstrap', realmId: null, userId: null, username: null, clientId: null, ip: null };

// Representation keys never written to the admin log.
const SECRET_KEYS = /secret|password|credential|value|hash/i;

function scrub(v: unknown, depth = 0): unknown {
  if (depth > 6 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => scrub(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!SECRET_KEYS.test(k)) out[k] = scrub(x, depth + 1);
  return out;
}

/**
 * Records one admin change, Keycloak-style: operation (CREATE, UPDATE, DELETE, ACTION), resource type
 * (REALM, CLIENT, USER, ...), resource path relative to the realm (`clients/<id>`), the representation
 * without secrets, who and from where, at millisecond precision. Every operation calls this after its
 * change is committed; a change is never undone because its event could not be written.
 */
export async function recordAdminEvent(
  store: Store,
  actor: Actor,
  e: { realmId: string; operation: AdminOperation; resourceType: string; resourcePath: string; representation?: unknown },
): Promise<void> {
  const cut = (v: string | null, n: number): string | null => (v === null ? null : v.slice(0, n));
  let representation: string | null = null;
  if (e.representation !== undefined) representation = JSON.stringify(scrub(e.representation)).slice(0, 20_000);
  try {
    await store.adminEvents.record({
      id: sortableId(),
      realmId: e.realmId,
      timeMs: Date.now(),
      operation: e.operation,
      resourceType: e.resourceType,
      resourcePath: e.resourcePath,
      authRealmId: actor.realmId,
      authClientId: cut(actor.clientId, 255),
      authUserId: actor.userId,
      authUsername: cut(actor.username, 255),
      ip: cut(actor.ip, 64),
      via: actor.via,
      representation,
    });
  } catch {
    // The change itself is committed; a lost audit row must not turn it into an error.
  }
}
