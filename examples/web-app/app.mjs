// A server-side web application that signs its users in with Realmgate (OpenID Connect authorization
// code flow with PKCE, via openid-client), keeps their tokens on the server, refreshes the access token
// before it expires, and signs out at the realm too. Plain node:http, one dependency: openid-client.
import http from 'node:http';
import crypto from 'node:crypto';
import * as oidc from 'openid-client';

/**
 * @param {object} settings
 * @param {string} settings.issuer        the realm, e.g. https://login.example.com/auth/realms/demo
 * @param {string} settings.clientId
 * @param {string} settings.clientSecret
 * @param {string} settings.baseUrl       where this app is reached, e.g. https://app.example.com
 * @param {{ nowMs(): number }} [settings.clock]  tests move time with it
 */
export function createWebApp(settings) {
  const clock = settings.clock ?? { nowMs: () => Date.now() };
  /** Sessions by a random id kept in an HttpOnly cookie; use a shared store when running several instances. */
  const sessions = new Map();
  let configuration;

  // Discovery once, on first use: the realm's endpoints and keys.
  function realm() {
    configuration ??= oidc.discovery(new URL(settings.issuer), settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), {
      // Only for a realm served over plain http on a development machine.
      execute: settings.issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [],
    });
    return configuration;
  }

  function session(req, res) {
    const id = /(?:^|;\s*)sid=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (id && sessions.has(id)) return sessions.get(id);
    const fresh = { id: crypto.randomBytes(32).toString('base64url'), csrf: crypto.randomBytes(32).toString('base64url') };
    sessions.set(fresh.id, fresh);
    const secure = settings.baseUrl.startsWith('https:') ? '; Secure' : '';
    res.setHeader('set-cookie', `sid=${fresh.id}; Path=/; HttpOnly; SameSite=Lax${secure}`);
    return fresh;
  }

  function keepTokens(s, tokens) {
    s.accessToken = tokens.access_token;
    // expires_in is relative: count it from now on this app's clock, not from the token's iat.
    s.expiresAt = clock.nowMs() + (tokens.expires_in ?? 300) * 1000;
    s.refreshToken = tokens.refresh_token ?? s.refreshToken;
    s.idToken = tokens.id_token ?? s.idToken;
  }

  async function login(req, res, s) {
    s.codeVerifier = oidc.randomPKCECodeVerifier();
    s.state = oidc.randomState();
    s.nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(await realm(), {
      redirect_uri: `${settings.baseUrl}/callback`,
      scope: 'openid profile core_data',
      code_challenge: await oidc.calculatePKCECodeChallenge(s.codeVerifier),
      code_challenge_method: 'S256',
      state: s.state,
      nonce: s.nonce,
    });
    redirect(res, url.href);
  }

  async function callback(req, res, s) {
    const tokens = await oidc.authorizationCodeGrant(await realm(), new URL(req.url, settings.baseUrl), {
      pkceCodeVerifier: s.codeVerifier,
      expectedState: s.state,
      expectedNonce: s.nonce,
    });
    delete s.codeVerifier;
    delete s.state;
    delete s.nonce;
    s.user = tokens.claims();
    keepTokens(s, tokens);
    redirect(res, '/');
  }

  /** A valid access token for the user: refreshed (and rotated by the realm) when it expires within a minute. */
  async function accessToken(s) {
    if (s.expiresAt - clock.nowMs() < 60_000) {
      keepTokens(s, await oidc.refreshTokenGrant(await realm(), s.refreshToken));
      s.refreshes = (s.refreshes ?? 0) + 1;
    }
    return s.accessToken;
  }

  async function profile(req, res, s) {
    const token = await accessToken(s);
    const userinfo = await oidc.fetchUserInfo(await realm(), token, s.user.sub);
    json(res, 200, { userinfo, refreshes: s.refreshes ?? 0 });
  }

  async function logout(req, res, s) {
    const form = new URLSearchParams(await body(req));
    const given = Buffer.from(form.get('csrf') ?? '');
    if (given.length !== Buffer.byteLength(s.csrf) || !crypto.timingSafeEqual(given, Buffer.from(s.csrf))) return json(res, 403, { error: 'bad CSRF token' });
    const idToken = s.idToken;
    sessions.delete(s.id);
    res.setHeader('set-cookie', 'sid=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
    if (!idToken) return redirect(res, '/');
    // RP-Initiated Logout: end the realm's session too, then come back here.
    redirect(res, oidc.buildEndSessionUrl(await realm(), { id_token_hint: idToken, post_logout_redirect_uri: `${settings.baseUrl}/` }).href);
  }

  function home(req, res, s) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (!s.user) return res.end('<!doctype html><title>Web app</title><p><a href="/login">Sign in</a></p>');
    res.end(`<!doctype html><title>Web app</title><p>Signed in as ${escapeHtml(s.user.preferred_username ?? s.user.sub)}</p>
<p><a href="/profile">Profile</a></p>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}"><button>Sign out</button></form>`);
  }

  return http.createServer((req, res) => {
    const s = session(req, res);
    const path = new URL(req.url, 'http://x').pathname;
    const route =
      req.method === 'GET' && path === '/' ? home
      : req.method === 'GET' && path === '/login' ? login
      : req.method === 'GET' && path === '/callback' && s.codeVerifier ? callback
      : req.method === 'GET' && path === '/profile' && s.user ? profile
      : req.method === 'POST' && path === '/logout' ? logout
      : undefined;
    if (!route) return json(res, 404, { error: 'not found' });
    Promise.resolve(route(req, res, s)).catch((err) => {
      // A refused code or refresh token (signed out elsewhere, revoked): the user signs in again.
      if (err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError) {
        sessions.delete(s.id);
        return redirect(res, '/login');
      }
      console.error(err);
      json(res, 500, { error: 'internal error' });
    });
  });
}

function redirect(res, location) {
  res.statusCode = 303;
  res.setHeader('location', location);
  res.end();
}

function json(res, status, value) {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(value));
}

async function body(req) {
  let data = '';
  for await (const chunk of req) {
    data += chunk;
    if (data.length > 10_000) throw new Error('body too large');
  }
  return data;
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
