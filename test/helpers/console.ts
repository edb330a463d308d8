// The admin console's sign-in for HTTP-level tests (inject): a bootstrapped admin, a master user who may
// only read master's users, and a browser's walk through master's own authorization code flow with PKCE.
import assert from 'node:assert/strict';
import { REALM, startTestServer, type TestServer } from './server.js';
import type { Config } from '../../src/config/config.js';
import { CookieJar, inject, parseForm, runAuthorization } from './flow.js';
import { bootstrapAdmin } from '../../src/admin/operations/bootstrap.js';
import { createUser } from '../../src/admin/operations/users.js';
import { grantRolesByName } from '../../src/admin/operations/roles.js';
import { BOOTSTRAP_ACTOR } from '../../src/admin/operations/common.js';

export const CONSOLE = '/auth/admin/console';
export const ADMIN = { username: 'admin', password: 'admin password 42' };
export const VIEWER = { username: 'viewer', password: 'viewer password 42' };

export async function setup(dialect: 'sqlite' | 'postgres', config: Partial<Config> = {}): Promise<TestServer> {
  const ts = await startTestServer({ dialect, config });
  await bootstrapAdmin(ts.store, { ...ADMIN, consoleRedirectUri: `${ts.config.authUrl}${CONSOLE}/callback` });
  // A master user who may only read users of the master realm.
  const { id } = await createUser(ts.store, { realmId: 'master', ...VIEWER });
  await grantRolesByName(ts.store, { realmId: 'master', userId: id, clientId: 'realm-management', names: ['view-users'] }, BOOTSTRAP_ACTOR);
  return ts;
}

/** Signs in as a browser would: console -> login redirect -> authorization endpoint -> login page -> callback. */
export async function signIn(ts: TestServer, who: { username: string; password: string }): Promise<CookieJar> {
  const jar = new CookieJar();
  let res = await inject(ts.app, jar, 'GET', `${CONSOLE}/`);
  assert.equal(res.statusCode, 303);
  assert.equal(res.headers.location, `${CONSOLE}/login`);
  res = await inject(ts.app, jar, 'GET', `${CONSOLE}/login`);
  assert.equal(res.statusCode, 303);
  const authorize = new URL(res.headers.location as string, ts.config.authUrl);
  assert.equal(authorize.searchParams.get('client_id'), 'security-admin-console');
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  res = await inject(ts.app, jar, 'GET', authorize.pathname + authorize.search);
  for (let i = 0; i < 5 && res.statusCode === 303 && !(res.headers.location as string).includes('/callback'); i++) {
    res = await inject(ts.app, jar, 'GET', res.headers.location as string);
  }
  const form = parseForm(res.body);
  res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: who.username, password: who.password });
  assert.equal(res.statusCode, 303, res.body.slice(0, 300));
  // The console is a public client: the project asks consent on every request of one (RFC 8252 8.6).
  if ((res.headers.location as string).includes('/login-actions/')) {
    const consent = await inject(ts.app, jar, 'GET', res.headers.location as string);
    const c = parseForm(consent.body);
    res = await inject(ts.app, jar, 'POST', c.action, { csrf: c.csrf, decision: 'allow' });
    assert.equal(res.statusCode, 303, res.body.slice(0, 300));
  }
  const callback = new URL(res.headers.location as string, ts.config.authUrl);
  assert.equal(callback.pathname, `${CONSOLE}/callback`);
  res = await inject(ts.app, jar, 'GET', callback.pathname + callback.search);
  assert.equal(res.statusCode, 303, res.body.slice(0, 300));
  assert.equal(res.headers.location, `${CONSOLE}/`);
  const cookies = res.headers['set-cookie'] as string[];
  assert.ok(cookies.some((c) => c.startsWith('RG_CONSOLE_AT=') && /HttpOnly/i.test(c) && /SameSite=Strict/i.test(c)));
  return jar;
}

export async function csrfOf(ts: TestServer, jar: CookieJar, url: string): Promise<string> {
  const res = await inject(ts.app, jar, 'GET', url);
  assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  const m = /name="csrf" value="([^"]*)"/.exec(res.body);
  assert.ok(m, 'a csrf field');
  return m[1]!;
}

/** The claims of alice's next access token (a fresh authorization code flow of the test client). */
export async function aliceClaims(ts: TestServer): Promise<Record<string, unknown>> {
  const flow = await runAuthorization(ts);
  const res = await inject(ts.app, new CookieJar(), 'POST', `/auth/realms/${REALM}/protocol/openid-connect/token`, {
    grant_type: 'authorization_code', code: flow.code!, redirect_uri: ts.client.redirectUri, client_id: ts.client.id, client_secret: ts.client.secret,
  });
  assert.equal(res.statusCode, 200, res.body);
  const token = JSON.parse(res.body).access_token as string;
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
}

/** The console's events of the realm, as "OPERATION RESOURCE_TYPE path". */
export async function consoleEvents(ts: TestServer, realmId = REALM): Promise<string[]> {
  return (await ts.store.adminEvents.list(realmId, {})).filter((e) => e.via === 'console').map((e) => `${e.operation} ${e.resourceType} ${e.resourcePath}`);
}
