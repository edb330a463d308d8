/** Input rules shared by the CLI and (later) the admin API. Each returns an error message or undefined. */

export class ValidationError extends Error {}

/** What an operation was asked to change does not exist: the API answers 404, the CLI exits 1. */
export class NotFound extends ValidationError {}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkName(kind: string, value: string): void {
  if (!NAME_RE.test(value)) throw new ValidationError(`${kind} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * A redirect URI a client may register: absolute, no fragment (RFC 6749 3.1.2), https, or http only for
 * a loopback host (RFC 8252 7.3, RFC 9700 2.6), or a private-use scheme of a native app (RFC 8252 7.1).
 */
export function checkRedirectUri(uri: string): void {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new ValidationError(`redirect URI ${JSON.stringify(uri)} is not an absolute URI`);
  }
  if (uri.includes('#')) throw new ValidationError(`redirect URI ${uri} must not contain a fragment`);
  if (uri.includes('*')) throw new ValidationError(`redirect URI ${uri} must not contain wildcards: redirect URIs match exactly`);
  if (u.protocol === 'http:') {
    if (!isLoopbackHost(u.hostname)) throw new ValidationError(`redirect URI ${uri} uses http: for a non-loopback host; use https:`);
    return;
  }
  if (u.protocol === 'https:') {
    if (!u.hostname) throw new ValidationError(`redirect URI ${uri} has no host`);
    return;
  }
  if (/^(javascript|data|vbscript|file|blob|about|ftp|ws|wss):$/.test(u.protocol)) {
    throw new ValidationError(`redirect URI ${uri} uses a scheme that cannot be a redirect target`);
  }
  // Private-use URI scheme of a native app, e.g. com.example.app:/callback.
}

export function parseScopeList(value: string): string[] {
  const list = value.split(' ').filter((s) => s.length > 0);
  for (const s of list) {
    // RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s)) throw new ValidationError(`scope ${JSON.stringify(s)} has characters RFC 6749 3.3 does not allow`);
  }
  return [...new Set(list)];
}

/** Shortest client secret an operator may choose; generated secrets have 256 bits. */
export const MIN_CHOSEN_SECRET_LENGTH = 16;

/**
 * A secret an operator types for a confidential client. RFC 6819 5.2.3.1 asks for secrets that cannot
 * be guessed; a short one can be found online, so it is refused at the doors where a person chooses one
 * (secrets moved from another server keep whatever they were).
 */
export function checkChosenClientSecret(secret: string): void {
  if (secret.length < MIN_CHOSEN_SECRET_LENGTH) {
    throw new ValidationError(`a chosen client secret must have at least ${MIN_CHOSEN_SECRET_LENGTH} characters (leave out --secret to generate a 256-bit one)`);
  }
  if (new Set(secret).size < 4) throw new ValidationError('the client secret is too easy to guess: leave out --secret to generate one');
}

/**
 * A web origin a client may register: "+" (the origins of its redirect URIs, as in Keycloak) or an exact
 * http(s) origin without path. Keycloak also accepts "*"; we refuse it, because CORS here allows
 * credentials, and "*" would let every site in the world read the client's token responses.
 */
export function checkWebOrigin(value: string): string {
  if (value === '+') return value;
  if (value === '*') throw new ValidationError('web origin "*" is not allowed: list each origin, or "+" for the origins of the redirect URIs');
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ValidationError(`web origin ${JSON.stringify(value)} is not an origin like https://app.example.com`);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== value.replace(/\/$/, '') || value.includes('*')) {
    throw new ValidationError(`web origin ${JSON.stringify(value)} must be scheme://host[:port] with no path, e.g. https://app.example.com`);
  }
  return u.origin;
}
