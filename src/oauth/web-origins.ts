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
