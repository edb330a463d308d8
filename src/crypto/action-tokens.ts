import crypto from 'node:crypto';
import type { Store } from '../storage/store.js';
import type { RequiredAction } from '../storage/types.js';
import { storedSecret } from './key-encryption.js';
import { randomToken, safeEqual } from './random.js';

/**
 * Action tokens: the key of a link mailed to a user (Keycloak's reset-credentials and execute-actions
 * links). Self-contained, nothing stored: the claims in base64url JSON, then an HMAC-SHA-256 under a
 * deployment data key (kept like a private key, shared by every node). The MAC also covers the user's
 * credential state (a digest of the password hash and of the authenticators' ids), which is NOT in the
 * token: once the password changes or an authenticator is set up, the same link no longer verifies. So a
 * link works once, and a link mailed before a password change is dead after it, with no table of used
 * links. Neither the hash nor its digest ever appears in the URL.
 */
export interface ActionClaims {
  /** Realm and user the link is for. */
  realm: string;
  user: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
  /** What the link lets the user do, in order. */
  actions: RequiredAction[];
  /**
   * 'reset' (forgot password), 'execute' (sent by an administrator) or 'verify' (verify-email: at sign-in,
   * or the administrator's send-verify-email): the events differ.
   */
  kind: 'reset' | 'execute' | 'verify';
  /** The pending authorization request the user started from (forgot password), to go back to. */
  interaction?: string;
  /** Where to go when done (execute-actions-email's client_id and redirect_uri, checked when sent and used). */
  clientId?: string;
  redirectUri?: string;
  /** Random: two links never look the same. */
  nonce: string;
}

const PREFIX = 'rgat1.';
const dataKey = (store: Store): Promise<Buffer> => storedSecret(store, 'action_token_key', () => randomToken(32));

/**
 * What of the user's credentials a link is bound to: any change of them kills it. A link that verifies
 * an email is bound to the address and to its being unverified as well (`email`): once verified, or once
 * the address changed, the link is dead (it would otherwise verify an address it was never sent to).
 */
export function credentialState(passwordHash: string, otpIds: readonly string[], email?: { address: string | null; verified: boolean }, more: readonly string[] = []): string {
  const h = crypto.createHash('sha256').update(`${passwordHash}\0${[...otpIds].sort().join(',')}`);
  if (email) h.update(`\0email\0${email.address ?? ''}\0${email.verified ? 1 : 0}`);
  // Each part with its length first: no two lists of parts hash alike.
  for (const part of more) h.update(`\0${part.length}:${part}`);
  return h.digest('base64url');
}

async function mac(store: Store, body: string, state: string): Promise<string> {
  return crypto.createHmac('sha256', await dataKey(store)).update(`realmgate action token\0${body}\0${state}`).digest('base64url');
}

export async function createActionToken(store: Store, claims: Omit<ActionClaims, 'nonce'>, state: string): Promise<string> {
  const body = Buffer.from(JSON.stringify({ ...claims, nonce: randomToken(12) })).toString('base64url');
  return `${PREFIX}${body}.${await mac(store, body, state)}`;
}

/** The claims, unverified: which user's credential state to verify against (verifyActionToken). Undefined: not a token. */
export function readActionToken(token: unknown): ActionClaims | undefined {
  if (typeof token !== 'string' || token.length > 4096 || !token.startsWith(PREFIX)) return undefined;
  const [body, sig, extra] = token.slice(PREFIX.length).split('.');
  if (!body || !sig || extra !== undefined) return undefined;
  try {
    const c = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<ActionClaims>;
    if (typeof c.realm !== 'string' || typeof c.user !== 'string' || typeof c.exp !== 'number' || !Array.isArray(c.actions) || (c.kind !== 'reset' && c.kind !== 'execute' && c.kind !== 'verify')) return undefined;
    return c as ActionClaims;
  } catch {
    return undefined;
  }
}

/** True when the token's MAC is right for the user's current credential state (constant-time comparison). */
export async function verifyActionToken(store: Store, token: string, state: string): Promise<boolean> {
  const [body, sig] = token.slice(PREFIX.length).split('.');
  if (!body || !sig) return false;
  return safeEqual(sig, await mac(store, body, state));
}
