import { X509Certificate, createPublicKey, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { ClientJwtKeys } from '../storage/types.js';

/**
 * The public keys a client signs its assertions with (private_key_jwt), wherever Keycloak's attributes
 * put them: a JWKS URL, an inline JWKS, an X.509 certificate or a public key. Keycloak's order: the URL
 * when use.jwks.url is on, else the inline JWKS when use.jwks.string is on, else the certificate, else
 * the public key.
 */
export type KeySource = { kind: 'url'; url: string } | { kind: 'jwks'; jwks: string } | { kind: 'certificate'; certificate: string } | { kind: 'publicKey'; publicKey: string };

export function keySource(k: ClientJwtKeys | null): KeySource | undefined {
  if (!k) return undefined;
  if (k.useJwksUrl && k.jwksUrl) return { kind: 'url', url: k.jwksUrl };
  if (k.useJwksString && k.jwksString) return { kind: 'jwks', jwks: k.jwksString };
  if (k.certificate) return { kind: 'certificate', certificate: k.certificate };
  if (k.publicKey) return { kind: 'publicKey', publicKey: k.publicKey };
  return undefined;
}

/** A JWKS is a handful of keys: anything larger is refused (inline or fetched). */
export const MAX_JWKS_BYTES = 64 * 1024;

/** A JWKS document's text, checked: JSON with a keys array of objects. Throws a plain Error saying why. */
export function parseJwks(text: string): JSONWebKeySet {
  if (text.length > MAX_JWKS_BYTES) throw new Error(`the JWKS is larger than ${MAX_JWKS_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('the JWKS is not JSON');
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(keys) || keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k))) {
    throw new Error('the JWKS must be an object with a "keys" array of keys (RFC 7517 5)');
  }
  // Private parts have no business in a client's published keys.
  if (keys.some((k) => typeof (k as { d?: unknown }).d === 'string' || (k as { kty?: unknown }).kty === 'oct')) throw new Error('the JWKS must hold public keys only (no "d", no "oct" keys)');
  return doc as JSONWebKeySet;
}

/** A Keycloak jwt.credential.certificate (base64 DER, as Keycloak stores it, or PEM): its public key. */
export function certificateKey(text: string): KeyObject {
  const pem = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(text);
  const b64 = (pem ? pem[1]! : text).replace(/\s+/g, '');
  if (b64 === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error('the certificate is not base64 (DER) or PEM');
  try {
    return new X509Certificate(Buffer.from(b64, 'base64')).publicKey;
  } catch {
    throw new Error('the certificate is not an X.509 certificate');
  }
}

/** A Keycloak jwt.credential.public.key (base64 DER SubjectPublicKeyInfo, or PEM): the key. */
export function publicKeyOf(text: string): KeyObject {
  const pem = /-----BEGIN PUBLIC KEY-----([\s\S]+?)-----END PUBLIC KEY-----/.exec(text);
  const b64 = (pem ? pem[1]! : text).replace(/\s+/g, '');
  if (b64 === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new Error('the public key is not base64 (DER) or PEM');
  try {
    return createPublicKey({ key: Buffer.from(b64, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new Error('the public key is not a SubjectPublicKeyInfo');
  }
}

/** The outbound fetch of a client's JWKS: bounded like every request Realmgate makes to an administrator's URL. */
export interface RemoteJwksOptions {
  /** Whole request, body included. */
  timeoutMs: number;
  /** A known URL's keys are fetched again after this, at the next assertion. */
  maxAgeMs: number;
  /** At most one fetch per URL in this time, whatever the outcome: an unknown kid cannot make us hammer the URL. */
  cooldownMs: number;
}

export const REMOTE_JWKS_DEFAULTS: RemoteJwksOptions = { timeoutMs: 5_000, maxAgeMs: 10 * 60_000, cooldownMs: 30_000 };

interface RemoteEntry {
  keys: JWTVerifyGetKey | undefined;
  fetchedAt: number;
  attemptedAt: number;
  lastError: string | undefined;
  pending: Promise<void> | undefined;
}

/** Fetches a JWKS: no redirects, a timeout, a size limit. */
async function fetchJwks(url: string, timeoutMs: number): Promise<JSONWebKeySet> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/jwk-set+json, application/json' } });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`HTTP ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_JWKS_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`the JWKS is larger than ${MAX_JWKS_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > MAX_JWKS_BYTES) throw new Error(`the JWKS is larger than ${MAX_JWKS_BYTES} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return parseJwks(Buffer.concat(chunks).toString('utf8'));
}

/** Thrown when a client's keys cannot be had (an unreachable JWKS URL, a bad document): invalid_client. */
export class ClientKeysUnavailable extends Error {}

/**
 * The keys behind each source, cached per process: inline JWKS and certificates parsed once (by their
 * text), remote JWKS fetched at most once per cooldown per URL and kept maxAgeMs.
 */
export class ClientKeyCache {
  private readonly remote = new Map<string, RemoteEntry>();
  private readonly local = new Map<string, JWTVerifyGetKey | KeyObject>();
  private static readonly MAX_ENTRIES = 1000;

  constructor(private readonly options: RemoteJwksOptions = REMOTE_JWKS_DEFAULTS, private readonly now: () => number = Date.now) {}

  /** A getKey for jwtVerify over the client's keys. */
  resolver(source: KeySource): JWTVerifyGetKey | KeyObject {
    if (source.kind === 'url') return (header, token) => this.remoteKey(source.url, header, token);
    const text = source.kind === 'jwks' ? source.jwks : source.kind === 'certificate' ? source.certificate : source.publicKey;
    const id = `${source.kind}\0${text}`;
    let k = this.local.get(id);
    if (!k) {
      try {
        k = source.kind === 'jwks' ? createLocalJWKSet(parseJwks(text)) : source.kind === 'certificate' ? certificateKey(text) : publicKeyOf(text);
      } catch (err) {
        throw new ClientKeysUnavailable(`the client's ${source.kind === 'jwks' ? 'JWKS' : source.kind === 'certificate' ? 'certificate' : 'public key'} is unusable: ${(err as Error).message}`);
      }
      this.remember(this.local, id, k);
    }
    return k;
  }

  /** Forgets every key (fetched or parsed): the next assertion of each client reads its keys again (the admin API's clear-keys-cache). */
  clear(): void {
    this.remote.clear();
    this.local.clear();
  }

  private remember<V>(map: Map<string, V>, id: string, v: V): void {
    // Bounded: the oldest entry goes first.
    if (map.size >= ClientKeyCache.MAX_ENTRIES) map.delete(map.keys().next().value!);
    map.set(id, v);
  }

  private async remoteKey(url: string, header: Parameters<JWTVerifyGetKey>[0], token: Parameters<JWTVerifyGetKey>[1]): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
    let e = this.remote.get(url);
    if (!e) {
      e = { keys: undefined, fetchedAt: 0, attemptedAt: -Infinity, lastError: undefined, pending: undefined };
      this.remember(this.remote, url, e);
    }
    if (!e.keys || this.now() - e.fetchedAt > this.options.maxAgeMs) await this.refresh(url, e);
    if (!e.keys) throw new ClientKeysUnavailable(`the client's JWKS at ${url} could not be read: ${e.lastError ?? 'not fetched yet'}`);
    try {
      return await e.keys(header, token);
    } catch (err) {
      // A key the cached set does not have: the client may have rotated its keys. Fetch again, at most
      // once per cooldown.
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      if (!(await this.refresh(url, e))) throw err;
      return e.keys(header, token);
    }
  }

  /** Fetches the URL's keys unless it was tried within the cooldown; true when a fetch was made and succeeded. */
  private async refresh(url: string, e: RemoteEntry): Promise<boolean> {
    if (e.pending) {
      await e.pending;
      return e.fetchedAt === e.attemptedAt;
    }
    const now = this.now();
    if (now - e.attemptedAt < this.options.cooldownMs) return false;
    e.attemptedAt = now;
    e.pending = fetchJwks(url, this.options.timeoutMs)
      .then((jwks) => {
        e.keys = createLocalJWKSet(jwks);
        e.fetchedAt = now;
        e.lastError = undefined;
      })
      .catch((err: unknown) => {
        e.lastError = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message) : String(err);
      })
      .finally(() => {
        e.pending = undefined;
      });
    await e.pending;
    return e.fetchedAt === now && e.lastError === undefined;
  }
}
