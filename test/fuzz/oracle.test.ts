/**
 * The fuzz suite's oracle, checked on hand-made responses: a property that can never fail proves
 * nothing, so each kind of violation the fuzz looks for is shown to be caught (and the legitimate
 * responses to pass).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HTTPMethods, LightMyRequestResponse } from 'fastify';
import { classify, redirectUriRegistered, violations, type ClientInfo, type FuzzServer, type SentRequest } from './harness.js';
import { mutateToken } from './arbitraries.js';
import { OOB } from './constants.js';

const clients = new Map<string, ClientInfo>([
  ['web-app', { id: 'web-app', public: false, authMethod: 'client_secret_basic', redirectUris: ['https://app.example.com/callback', 'http://127.0.0.1:9999/cb'], postLogoutRedirectUris: [] }],
  ['native-app', { id: 'native-app', public: true, authMethod: 'none', redirectUris: ['http://127.0.0.1/callback'], postLogoutRedirectUris: [] }],
  ['rp', { id: 'rp', public: false, authMethod: 'client_secret_basic', redirectUris: ['https://rp.example/cb?tenant=1'], postLogoutRedirectUris: ['https://rp.example/after-logout'] }],
  ['oob', { id: 'oob', public: false, authMethod: 'client_secret_basic', redirectUris: [OOB], postLogoutRedirectUris: [] }],
]);
const fs = { clients, appUrl: 'http://localhost:8080' } as unknown as FuzzServer;

function res(statusCode: number, headers: Record<string, string>, body = ''): LightMyRequestResponse {
  return { statusCode, headers, body } as unknown as LightMyRequestResponse;
}
function req(method: HTTPMethods, url: string, payload?: string, headers: Record<string, string> = {}): SentRequest {
  return { method, url, headers, remoteAddress: '10.66.0.1', ...(payload !== undefined ? { payload } : {}) };
}
const AUTH = '/auth/realms/test/protocol/openid-connect/auth';
const TOKEN = '/auth/realms/test/protocol/openid-connect/token';
const redirect = (location: string) => res(303, { location });
const json = (status: number, body: unknown, extra: Record<string, string> = {}) =>
  res(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...extra }, JSON.stringify(body));
const html = (body: string) => res(200, { 'content-type': 'text/html; charset=utf-8' }, `<!doctype html><html><head><script src="/auth/resources/code-page.js" defer></script></head><body>${body}</body></html>`);

describe('fuzz oracle', () => {
  test('5xx are violations', () => {
    assert.match(violations(fs, req('GET', '/health/ready'), json(503, { status: 'DOWN' })).join(), /server error/);
    assert.deepEqual(violations(fs, req('GET', '/health/ready'), json(200, { status: 'UP' })), []);
  });

  test('redirects: registered URIs (any loopback port), own pages and the code page pass; anything else fails', () => {
    const ok = [
      'https://app.example.com/callback?code=abc&state=x&iss=http%3A%2F%2Flocalhost',
      'http://127.0.0.1:9999/cb?error=access_denied',
      'http://127.0.0.1:51234/callback?code=x',
      'http://127.0.0.1/callback?code=x',
      'https://rp.example/cb?tenant=1&code=x',
      'https://rp.example/after-logout?state=s',
      'https://rp.example/after-logout',
      'http://localhost:8080/authentication_code?code=x',
      '/auth/realms/test/login-actions/abc_DEF-1',
      '/auth/realms/test/account',
      '/auth/admin/console/realms/fz?done=password-policy-saved',
      '/auth/admin/console/login',
    ];
    for (const location of ok) assert.deepEqual(violations(fs, req('GET', '/auth/realms/test/account'), redirect(location)), [], location);
    const bad = [
      '/auth/admin/console/realms//evil.example/x',
      '/auth/admin/console/realms/\\evil.example',
      'https://evil.example/callback?code=x',
      'https://app.example.com/callbackX?code=x',
      'https://app.example.com/callback/../x?code=x',
      'https://app.example.com.evil.example/callback?code=x',
      'https://app.example.com/callback?code=x#frag',
      'https://app.example.com/callback&code=x',
      'https://app.example.com/callback?code=x&redirect=https://evil.example',
      'https://rp.example/cb?tenant=2&code=x',
      'http://127.0.0.1:99999/callback?code=x',
      'http://localhost/callback?code=x',
      'http://[::1]/callback?code=x',
      '//evil.example/auth/realms/test/account',
      '/auth/realms/test/account/../../x',
      'javascript:alert(1)',
      OOB,
    ];
    for (const location of bad) assert.notDeepEqual(violations(fs, req('GET', '/auth/realms/test/account'), redirect(location)), [], location);
    assert.match(violations(fs, req('GET', '/x'), res(302, {})).join(), /without a Location/);
  });

  test('the authorization endpoint redirects only to the redirect_uri of the request, registered for its client_id', () => {
    const q = (p: Record<string, string>) => `${AUTH}?${new URLSearchParams(p)}`;
    const good = q({ client_id: 'web-app', redirect_uri: 'https://app.example.com/callback' });
    assert.deepEqual(violations(fs, req('GET', good), redirect('https://app.example.com/callback?error=invalid_scope')), []);
    // Registered, but for another client, or another URI than requested, or client_id/redirect_uri not one pair.
    assert.match(violations(fs, req('GET', q({ client_id: 'native-app', redirect_uri: 'https://app.example.com/callback' })), redirect('https://app.example.com/callback?code=x')).join(), /not registered for native-app/);
    assert.match(violations(fs, req('GET', good), redirect('http://127.0.0.1:9999/cb?code=x')).join(), /somewhere else/);
    assert.match(violations(fs, req('GET', `${good}&client_id=web-app`), redirect('https://app.example.com/callback?code=x')).join(), /not one valid pair/);
    assert.match(violations(fs, req('GET', `${AUTH}?redirect_uri=${encodeURIComponent('https://app.example.com/callback')}`), redirect('https://app.example.com/callback?code=x')).join(), /not one valid pair/);
    // The same rules for a form POST, read as the server reads it.
    const form = new URLSearchParams({ client_id: 'web-app', redirect_uri: 'https://app.example.com/callback' }).toString();
    assert.deepEqual(violations(fs, req('POST', AUTH, form, { 'content-type': 'application/x-www-form-urlencoded' }), redirect('https://app.example.com/callback?code=x')), []);
    assert.match(violations(fs, req('POST', AUTH, form, { 'content-type': 'application/x-www-form-urlencoded' }), redirect('http://127.0.0.1:9999/cb?code=x')).join(), /somewhere else/);
    // OOB lands on the code page; loopback on any port.
    assert.deepEqual(violations(fs, req('GET', q({ client_id: 'oob', redirect_uri: OOB })), redirect('http://localhost:8080/authentication_code?code=x')), []);
    assert.deepEqual(violations(fs, req('GET', q({ client_id: 'native-app', redirect_uri: 'http://127.0.0.1:4242/callback' })), redirect('http://127.0.0.1:4242/callback?code=x')), []);
    assert.equal(redirectUriRegistered(['http://127.0.0.1/callback'], 'http://127.0.0.1:65536/callback'), false);
    assert.equal(redirectUriRegistered(['http://127.0.0.1/callback'], 'http://127.0.0.1:80/callback/'), false);
  });

  test('JSON errors of the protocol endpoints must be RFC 6749 / 6750 errors', () => {
    const post = req('POST', TOKEN, 'grant_type=x', { 'content-type': 'application/x-www-form-urlencoded' });
    assert.deepEqual(violations(fs, post, json(400, { error: 'invalid_grant', error_description: 'the code is invalid' })), []);
    assert.deepEqual(violations(fs, post, json(401, { error: 'invalid_client' }, { 'www-authenticate': 'Basic realm="test"' })), []);
    assert.match(violations(fs, post, json(401, { error: 'invalid_client' })).join(), /WWW-Authenticate/);
    assert.match(violations(fs, post, json(400, { error: 'Bad Request', code: 'FST_ERR_BAD_URL', message: 'x', statusCode: 400 })).join(), /members outside.*\n?.*registry/s);
    assert.match(violations(fs, post, json(400, { error: 'invalid_request', error_description: 'bad "quote"' })).join(), /error_description/);
    assert.match(violations(fs, post, json(400, { error: 'invalid_request', error_description: 'back\\slash' })).join(), /error_description/);
    assert.match(violations(fs, post, json(400, { error: 'invalid_request', error_description: 'caf\u00e9' })).join(), /error_description/);
    assert.match(violations(fs, post, res(400, { 'content-type': 'text/html', 'cache-control': 'no-store' }, '<p>oops</p>')).join(), /not application\/json/);
    assert.match(violations(fs, post, json(400, { error: 'invalid_request' }, { 'cache-control': 'public' })).join(), /no-store/);
    // The global not-found answer for a method without a route is not the endpoint's.
    assert.deepEqual(violations(fs, req('OPTIONS', TOKEN), res(404, { 'content-type': 'application/json' }, '{"error":"invalid_request","error_description":"no such endpoint"}')), []);
    // userinfo: RFC 6750 codes.
    const ui = req('GET', '/auth/realms/test/protocol/openid-connect/userinfo');
    assert.deepEqual(violations(fs, ui, json(401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer realm="test"' })), []);
    assert.match(violations(fs, ui, json(401, { error: 'invalid_grant' }, { 'www-authenticate': 'Bearer' })).join(), /registry/);
  });

  test('HTML pages: unescaped input, foreign scripts and links to unregistered URIs are violations', () => {
    const page = req('GET', '/auth/realms/test/account');
    assert.deepEqual(violations(fs, page, html('<p>&lt;script&gt;xss()&lt;/script&gt;</p><a href="https://rp.example/cb?tenant=1&amp;error=access_denied">back</a><form method="post" action="/auth/realms/test/account/login">')), []);
    assert.match(violations(fs, page, html('<p><script>xss()</script></p>')).join(), /script/);
    assert.match(violations(fs, page, html('<input value="" onmouseover="xss()">')).join(), /unescaped/);
    assert.match(violations(fs, page, html('<a href="https://evil.example/">x</a>')).join(), /link/);
    assert.match(violations(fs, page, html('<a href="//evil.example/">x</a>')).join(), /link/);
    assert.match(violations(fs, page, html('<form method="post" action="javascript:alert(1)">')).join(), /link/);
  });

  test('endpoints are recognized as the server routes them', () => {
    assert.equal(classify(`${TOKEN}/`), 'token');
    assert.equal(classify(`/auth/realms/x/protocol/openid-connect/token/./?a=b`), 'token');
    assert.equal(classify('/auth/realms/test/protocol/openid-connect/token/introspect'), 'introspection');
    assert.equal(classify('/auth/realms/test/protocol/openid-connect/auth/device'), 'device-authorization');
    assert.equal(classify('/auth/realms/test/protocol/openid-connect/revoke'), 'revocation');
    assert.equal(classify('http://evil.example/auth/realms/test/protocol/openid-connect/userinfo'), 'userinfo');
    assert.equal(classify('/auth/realms/test/login-actions/abc/login'), 'interaction');
    assert.equal(classify('/authentication_code?code=x'), 'code-page');
  });

  test('token mutations change the token, except those that are only padding or spaces', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    for (const m of [{ op: 'substitute' as const, at: 7, ch: 'A' }, { op: 'truncate' as const, n: 1 }, { op: 'dot' as const, at: 3 }, { op: 'segment-swap' as const }, { op: 'case' as const }]) {
      const r = mutateToken(jwt, m);
      assert.notEqual(r.value, jwt, m.op);
      assert.equal(r.changesMeaning, true, m.op);
    }
    assert.equal(mutateToken(jwt, { op: 'append', s: '==' }).changesMeaning, false);
    assert.equal(mutateToken(jwt, { op: 'pad' }).changesMeaning, false);
    // Never the last character of a segment (its low bits may be unused by base64url).
    for (let at = 0; at < 60; at++) {
      const v = mutateToken(jwt, { op: 'substitute', at, ch: 'Q' }).value;
      const diff = [...v].findIndex((c, i) => c !== jwt[i]);
      assert.ok(diff >= 0 && jwt[diff + 1] !== '.' && diff !== jwt.length - 1, `position ${diff}`);
    }
  });
});
