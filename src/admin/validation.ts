import { domainToASCII } from 'node:url';
import { MAX_PARAM_LENGTH } from '../oauth/params.js';

/** Input rules shared by the CLI and (later) the admin API. Each returns an error message or undefined. */

export class ValidationError extends Error {}

/** What an operation was asked to change does not exist: the API answers 404, the CLI exits 1. */
export class NotFound extends ValidationError {}

/**
 * The longest values the database keeps, one place for every door (admin API, console, CLI, import).
 * Most follow a varchar(N) column of src/storage/migrations (PostgreSQL refuses a longer value, SQLite
 * would store it), the others are text columns whose limit the update path has always applied; creating
 * and updating apply the same ones. A JavaScript length counts UTF-16 units, never fewer than
 * PostgreSQL's characters, so a value that passes fits.
 */
export const LIMITS = {
  /** realms.id varchar(64) (NAME_RE); organizations.alias is varchar(255), held to the same rule. */
  name: 64,
  /** users.id varchar(36): a UUID, as Keycloak's ids are. */
  userId: 36,
  /** users.username varchar(255). */
  username: 255,
  /** users.email varchar(320) (RFC 5321 4.5.3.1: 64 for the local part, 255 for the domain). */
  email: 320,
  /** users.first_name, users.last_name varchar(255). */
  personName: 255,
  /** realms.display_name (text): the limit of the realm's update. */
  realmDisplayName: 255,
  /** organizations.name (text): the limit of the organization's update. */
  organizationName: 255,
  /** organizations.description (text): the limit of the organization's update. */
  organizationDescription: 4000,
} as const;

/**
 * A name that is a path segment of the admin API (a role's name, a client's id, a client scope's name, a
 * localization key) must not be "." or "..": every client that resolves a URL (fetch, curl, browsers)
 * removes such a segment with the one before it (RFC 3986 5.2.4), so a call naming the thing reaches its
 * parent. keycloak-admin-client's roles.delByName({name: '..'}) sent DELETE .../realms/{realm}/ and
 * deleted the realm.
 */
export function checkPathSegment(label: string, value: string): void {
  if (value === '.' || value === '..') {
    throw new ValidationError(`${label} must not be "${value}": it names a path segment of the admin API, which HTTP clients resolve to the one before it (RFC 3986 5.2.4)`);
  }
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function checkName(kind: string, value: string): void {
  if (!NAME_RE.test(value)) throw new ValidationError(`${kind} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
}

/** A username as stored (lower-cased by the callers): letters, digits, '.', '_', '@', '+', '-'. */
export const USERNAME_RE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,${LIMITS.username - 1}}$`);

/** An email address an operator gives: one '@', no spaces, at most LIMITS.email characters. */
export function checkEmail(email: string): void {
  if (email.length > LIMITS.email) throw new ValidationError(`the email address must have at most ${LIMITS.email} characters`);
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || /[\x00-\x1f\x7f]/.test(email)) throw new ValidationError(`${JSON.stringify(email)} is not an email address`);
}

/** The longest page a listing returns (Keycloak's `max`). */
export const MAX_PAGE = 1000;

/**
 * A page of a listing: `first` a whole number from 0, `max` from 0 to `maxPage`. The admin API's schemas
 * coerce a query string such as `first=1e400` to Infinity, which their limits do not catch; a database
 * refuses it as an OFFSET, so every listing checks here.
 */
export function checkPage(page: { first?: number; max?: number }, maxPage: number = MAX_PAGE): void {
  if (page.first !== undefined && (!Number.isSafeInteger(page.first) || page.first < 0)) throw new ValidationError('first must be a whole number from 0');
  if (page.max !== undefined && (!Number.isSafeInteger(page.max) || page.max < 0 || page.max > maxPage)) throw new ValidationError(`max must be a whole number from 0 to ${maxPage}`);
}

/** A text an operator gives for a field with a limit (LIMITS); the message names both. */
export function checkMaxLength(label: string, value: string, max: number): void {
  if (value.length > max) throw new ValidationError(`${label} must have at most ${max} characters`);
}

/**
 * A text an operator gives that pages and terminals show (a realm's display name, an organization's name
 * and description): at most `max` characters and no control characters (C0 and DEL: a newline, an ESC
 * sequence or a NUL, which PostgreSQL cannot store, are refused as the names of users and clients are).
 */
export function checkText(label: string, value: string, max: number, opts: { multiline?: boolean } = {}): void {
  checkMaxLength(label, value, max);
  // A description may run over several lines (newlines and tabs); nothing else below U+0020 is text.
  const control = opts.multiline ? /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/ : /[\x00-\x1f\x7f]/;
  if (control.test(value)) throw new ValidationError(`${label} must not contain control characters (${opts.multiline ? 'escapes, NUL' : 'newlines, tabs, escapes'})`);
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

// RFC 3986 2.2-2.3: unreserved and reserved characters, and '%' (checked for two hex digits separately).
const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s;
const AUTHORITY = /^\/\/([^/?#]*)(.*)$/s;
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]*)(?::(\d{1,5}))?$/s;

function refuse(uri: string, why: string): never {
  // JSON.stringify shows control characters and quotes as escapes, so the message is one clean line,
  // and a long value is cut: the message names it, it does not repeat it.
  const shown = uri.length > 200 ? `${uri.slice(0, 200)}...` : uri;
  throw new ValidationError(`redirect URI ${JSON.stringify(shown)} ${why}`);
}

/**
 * The host of an http(s) redirect URI as it is stored: an internationalized host in its ASCII form
 * (UTS #46 via url.domainToASCII, as browsers send it), an ASCII host as typed, an IPv6 literal as is.
 */
function storedHost(uri: string, host: string): string {
  if (host.startsWith('[')) return host;
  if (host === '') refuse(uri, 'has no host');
  const ascii = domainToASCII(host);
  if (ascii === '') refuse(uri, 'has a host that is not a valid domain name');
  if (/^[\x00-\x7f]*$/.test(host)) {
    // An ASCII host must already be what a browser would use (no percent-escapes, no "0x7f.1" IPv4
    // forms), so that the host we check is the host the user agent goes to.
    if (!/^[A-Za-z0-9._-]+$/.test(host) || ascii !== host.toLowerCase()) refuse(uri, 'has a host that is not a plain domain name or IP address');
    return host;
  }
  return ascii;
}

/**
 * Validates a redirect URI a client registers and returns the form to store (RFC 6749 3.1.2; RFC 3986):
 * absolute, only RFC 3986 characters (no spaces, controls or other non-ASCII: percent-encode them), no
 * fragment, no user info; http(s) URIs need a host, and an internationalized host is stored in its ASCII
 * form; https, or http only for a loopback host (RFC 8252 7.3, RFC 9700 2.6), or a private-use scheme of
 * a native app (RFC 8252 7.1). Whatever passes can be sent in a Location header as it is.
 */
export function checkRedirectUri(uri: string): string {
  // An authorization request carries at most 8192 characters in a parameter (src/oauth/params.ts):
  // a longer redirect URI could never be asked for.
  if (uri.length > MAX_PARAM_LENGTH) refuse(uri, `is longer than ${MAX_PARAM_LENGTH} characters`);
  const m = SCHEME.exec(uri);
  if (!m) refuse(uri, 'is not an absolute URI (scheme:...)');
  const scheme = m[1]!.toLowerCase();
  let rest = m[2]!;
  if (uri.includes('*')) refuse(uri, 'must not contain wildcards: redirect URIs match exactly');
  let normalized = uri;
  if (scheme === 'http' || scheme === 'https') {
    const a = AUTHORITY.exec(rest);
    if (!a) refuse(uri, 'has no host (expected //host after the scheme)');
    if (a[1]!.includes('@')) refuse(uri, 'must not contain user information (user@host)');
    const hp = HOST_PORT.exec(a[1]!);
    if (!hp) refuse(uri, 'has a malformed host or port');
    if (hp[2] !== undefined && Number(hp[2]) > 65535) refuse(uri, 'has a port above 65535');
    const host = storedHost(uri, hp[1]!);
    rest = a[2]!;
    normalized = `${m[1]}://${host}${hp[2] !== undefined ? `:${hp[2]}` : ''}${rest}`;
  } else if (rest === '') {
    refuse(uri, 'is not an absolute URI (nothing after the scheme)');
  }
  if (!URI_CHARS.test(rest)) refuse(uri, 'contains characters RFC 3986 does not allow (spaces, controls, non-ASCII or quotes): percent-encode them');
  if (BAD_PERCENT.test(rest)) refuse(uri, "has a '%' that is not followed by two hex digits");
  if (rest.includes('#')) refuse(uri, 'must not contain a fragment');
  let u: URL;
  try {
    u = new URL(normalized);
  } catch {
    refuse(uri, 'is not an absolute URI');
  }
  if (scheme === 'http') {
    if (!isLoopbackHost(u.hostname)) refuse(uri, 'uses http: for a non-loopback host; use https:');
  } else if (scheme !== 'https' && /^(javascript|data|vbscript|file|blob|about|ftp|ws|wss)$/.test(scheme)) {
    refuse(uri, 'uses a scheme that cannot be a redirect target');
  }
  // Otherwise https, or a private-use URI scheme of a native app, e.g. com.example.app:/callback.
  return normalized;
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
 * and where one moves in clear from another server (a Keycloak import: Keycloak generates 32 characters,
 * so a shorter one was typed by someone); a hash restored from Realmgate's own export is not checked.
 * `instead` says what to do instead, at the door that refuses.
 */
export function checkChosenClientSecret(secret: string, instead = 'leave out --secret to generate a 256-bit one'): void {
  if (secret.length < MIN_CHOSEN_SECRET_LENGTH) {
    throw new ValidationError(`a chosen client secret must have at least ${MIN_CHOSEN_SECRET_LENGTH} characters (${instead})`);
  }
  if (new Set(secret).size < 4) throw new ValidationError(`the client secret is too easy to guess: ${instead}`);
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

/** A create that names something that already exists; the doors map it to their own form (409, exit 1). */
export { ConflictError } from '../storage/types.js';

/**
 * Keycloak's root user properties: they have their own fields in UserRepresentation, and Keycloak 26
 * never keeps them as attributes (UserRepresentation.getAttributes drops them, getRawAttributes lets the
 * root fields win). A set of attributes naming one drops it here, at every door.
 */
export const ROOT_USER_PROPERTIES: readonly string[] = ['username', 'email', 'firstName', 'lastName'];

/** The bounds of attributes (checkAttributeEntries), one place for every door. */
export const ATTRIBUTE_LIMITS = {
  /** Names per user. */
  names: 100,
  /** Characters of a name. */
  nameLength: 255,
  /** Values per name. */
  values: 100,
  /** Characters of a value. */
  valueLength: 2048,
  /** Bytes of a user's whole set as stored (JSON, UTF-8): one text column, read with every token's subject. */
  jsonBytes: 65536,
} as const;

/**
 * Keycloak's attributes (of a user, of a group): an object of names to lists of strings. At most
 * ATTRIBUTE_LIMITS.names names of 1-255 characters without control characters, each at most 100 values of
 * at most 2,048 characters without control characters but tab and line breaks (OIDC Core 5.1.1: an
 * address's `formatted` may span lines). `loneString`: a string is a list of one (groups). `what` names
 * the owner in messages. The entries are returned in order, their lists copied.
 */
export function checkAttributeEntries(value: unknown, what: string, opts: { loneString?: boolean } = {}): Array<[string, string[]]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ValidationError(`the ${what} attributes must be an object of names to lists of strings`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > ATTRIBUTE_LIMITS.names) throw new ValidationError(`a ${what} may have at most ${ATTRIBUTE_LIMITS.names} attributes`);
  return entries.map(([name, v]) => {
    if (name === '') throw new ValidationError('an attribute name must not be empty');
    checkText('an attribute name', name, ATTRIBUTE_LIMITS.nameLength);
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
    const values = opts.loneString && typeof v === 'string' ? [v] : v;
    if (!Array.isArray(values) || !values.every((x): x is string => typeof x === 'string')) throw new ValidationError(`the attribute ${shown} must be a list of strings`);
    if (values.length > ATTRIBUTE_LIMITS.values) throw new ValidationError(`the attribute ${shown} may have at most ${ATTRIBUTE_LIMITS.values} values`);
    for (const x of values) checkText(`a value of the attribute ${shown}`, x, ATTRIBUTE_LIMITS.valueLength, { multiline: true });
    return [name, [...values]];
  });
}

/**
 * A user's attributes (Keycloak's UserRepresentation.attributes), checked from untrusted JSON and
 * returned as they are stored: checkAttributeEntries, and the whole at most 64 KiB as JSON (one text
 * column, read with every token's subject). A name with an empty list is dropped (Keycloak keeps no value
 * rows for it: the user has no such attribute), and so are the root properties (ROOT_USER_PROPERTIES).
 */
export function checkUserAttributes(value: unknown): Record<string, string[]> {
  const kept = checkAttributeEntries(value, 'user').filter(([name, values]) => values.length > 0 && !ROOT_USER_PROPERTIES.includes(name));
  // fromEntries defines each name as an own property: a name such as "__proto__" stays a name.
  const out = Object.fromEntries(kept);
  if (Buffer.byteLength(JSON.stringify(out)) > ATTRIBUTE_LIMITS.jsonBytes) throw new ValidationError(`a user's attributes must take at most ${ATTRIBUTE_LIMITS.jsonBytes / 1024} KiB as JSON`);
  return out;
}
