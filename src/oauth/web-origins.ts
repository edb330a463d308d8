import type { Client } from '../storage/types.js';

/** Keycloak's shorthand for "the origins of this client's redirect URIs". */
export const REDIRECT_ORIGINS = '+';

/** The origin (RFC 6454) of an http(s) URL, or undefined for other schemes and non-URLs. */
export function originOf(uri: string): string | undefined {
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The exact origins a client allows, with "+" expanded over its current redirect URIs. */
export function allowedOrigins(client: Client): Set<string> {
  const out = new Set<string>();
  for (const entry of client.webOrigins) {
    if (entry === REDIRECT_ORIGINS) {
      for (const uri of client.redirectUris) {
        const o = originOf(uri);
        if (o) out.add(o);
      }
    } else {
      out.add(entry);
    }
  }
  return out;
}

/**
 * Whether a browser origin may call on behalf of this client. Origins compare as exact strings (the
 * browser sends the serialized origin, RFC 6454 6.2); "null" (sandboxed frames, file:) never matches.
 */
export function originAllowed(client: Client, origin: string): boolean {
  return origin !== 'null' && allowedOrigins(client).has(origin);
}

function formDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/**
 * The client a token-style request names, for the origin check only (authentication comes later):
 * client_id in the body, else the user-id of HTTP Basic (RFC 6749 2.3.1, form-urlencoded).
 */
export function namedClientId(authorization: string | undefined, body: unknown): string | undefined {
  const fromBody = body && typeof body === 'object' ? (body as Record<string, unknown>).client_id : undefined;
  if (typeof fromBody === 'string' && fromBody !== '') return fromBody;
  const m = authorization ? /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization) : null;
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 ? formDecode(decoded.slice(0, colon)) : undefined;
}
