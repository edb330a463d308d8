import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { hashRaw } from '@node-rs/argon2';
import { decodeJwt } from 'jose';
import type { TestServer } from '../helpers/server.js';
import { CookieJar, inject, pageKind, parseForm, type PageKind } from '../helpers/flow.js';
import { basic } from '../helpers/server.js';
import { s256 } from '../../src/crypto/keystore.js';
import type { ImportReport, RealmReport } from '../../src/admin/keycloak/import-report.js';

/** The report of one realm of an import. */
export function realmOf(rep: ImportReport, name: string): RealmReport {
  const r = rep.realms.find((x) => x.realm === name);
  assert.ok(r, `no report for ${name}`);
  return r;
}

/** The one line of the report for an element, with its outcome and a reason matching the pattern. */
export function expectLine(r: RealmReport, element: string, outcome: string, pattern: RegExp): void {
  const lines = r.lines.filter((l) => l.element === element);
  assert.equal(lines.length, 1, `${element}: ${JSON.stringify(lines.length > 0 ? lines : r.lines.map((l) => l.element))}`);
  assert.equal(lines[0]!.outcome, outcome, `${element}: ${lines[0]!.reason}`);
  assert.match(lines[0]!.reason ?? '', pattern, element);
}

/** Signs in through the realm's pages (login, consent, organization) and redeems the code. */
export async function signIn(
  ts: TestServer,
  o: { realm: string; clientId: string; redirectUri: string; username: string; password: string; secret?: string; organization?: string; scope?: string; newPassword?: string },
): Promise<{ pages: PageKind[]; claims?: Record<string, unknown>; idClaims?: Record<string, unknown>; accessToken?: string; error?: string; status?: number }> {
  const jar = new CookieJar();
  const pages: PageKind[] = [];
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({ client_id: o.clientId, redirect_uri: o.redirectUri, response_type: 'code', scope: o.scope ?? 'openid profile email', state: 's1', code_challenge: s256(verifier), code_challenge_method: 'S256' });
  let res = await inject(ts.app, jar, 'GET', `/auth/realms/${o.realm}/protocol/openid-connect/auth?${q}`);
  for (let i = 0; i < 10; i++) {
    assert.equal(res.statusCode, 303, res.body.slice(0, 400));
    const location = res.headers.location as string;
    if (location.startsWith(o.redirectUri)) {
      const params = new URL(location).searchParams;
      const code = params.get('code');
      if (!code) return { pages, error: params.get('error') ?? 'no code' };
      const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: o.redirectUri, code_verifier: verifier };
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (o.secret !== undefined) headers.authorization = basic(o.clientId, o.secret);
      else form.client_id = o.clientId;
      const token = await ts.app.inject({ method: 'POST', url: `/auth/realms/${o.realm}/protocol/openid-connect/token`, headers, payload: new URLSearchParams(form).toString() });
      if (token.statusCode !== 200) return { pages, status: token.statusCode, error: token.body };
      const body = token.json() as { access_token: string; id_token?: string };
      return { pages, claims: decodeJwt(body.access_token), accessToken: body.access_token, ...(body.id_token ? { idClaims: decodeJwt(body.id_token) } : {}) };
    }
    const page = await inject(ts.app, jar, 'GET', location);
    if (page.statusCode === 303) {
      res = page;
      continue;
    }
    const kind = pageKind(page.body);
    pages.push(kind);
    if (kind === 'no-organization' || kind === 'error') return { pages, error: kind };
    const form = parseForm(page.body);
    if (kind === 'login') {
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: o.username, password: o.password });
      if (res.statusCode === 200) return { pages, error: 'login failed' };
    } else if (kind === 'update-password') {
      if (o.newPassword === undefined) return { pages, error: 'update-password' };
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, 'password-new': o.newPassword, 'password-confirm': o.newPassword });
    } else if (kind === 'consent') {
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, decision: 'allow' });
    } else {
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, organization: o.organization ?? '' });
    }
  }
  throw new Error('too many steps');
}

/** A Keycloak 26 password credential computed here (the parameters as Keycloak's providers write them). */
export async function kcCredential(algorithm: string, password: string, o: { iterations?: number; keyLength?: number; argonType?: 'id' | 'i' | 'd' } = {}): Promise<Record<string, unknown>> {
  const salt = randomBytes(16);
  if (algorithm === 'argon2') {
    const type = o.argonType ?? 'id';
    const value = await hashRaw(password, { algorithm: { d: 0, i: 1, id: 2 }[type], version: 1, memoryCost: 7168, timeCost: 5, parallelism: 1, outputLen: 32, salt });
    return {
      type: 'password',
      createdDate: 1_700_000_000_000,
      secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
      credentialData: JSON.stringify({ hashIterations: 5, algorithm: 'argon2', additionalParameters: { hashLength: ['32'], memory: ['7168'], type: [type], version: ['1.3'], parallelism: ['1'] } }),
    };
  }
  const digest = { pbkdf2: 'sha1', 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512' }[algorithm] ?? 'sha256';
  const iterations = o.iterations ?? 1000;
  const value = pbkdf2Sync(password, salt, iterations, o.keyLength ?? 64, digest);
  return {
    type: 'password',
    createdDate: 1_700_000_000_000,
    secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: iterations, algorithm, additionalParameters: {} }),
  };
}
