// A server-side web application that signs its users in with Realmgate (OpenID Connect authorization
// code flow with PKCE, via openid-client), keeps their tokens on the server, refreshes the access token
// before it expires, and signs out at the realm too; a logout at the realm ends its session too
// (back-channel logout). Plain node:http, openid-client, and jose (openid-client's own) for logout tokens.
import http from 'node:http';
import crypto from 'node:crypto';
import * as oidc from 'openid-client';
import * as jose from 'jose';

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
    // The realm's session id: a back-channel logout names it.
    s.sid = s.user.sid;
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

  /**
   * OpenID Connect Back-Channel Logout 1.0: the realm POSTs a logout token here when the user's session
   * there ends (they logged out, or an administrator ended it). Register this URL as the client's
   * back-channel logout URL. The token is checked as section 2.6 says, then every session of this app
   * with that sid (or, without sid, of that user) is forgotten.
   */
  async function backchannelLogout(req, res) {
    const logoutToken = new URLSearchParams(await body(req)).get('logout_token');
    let claims;
    try {
      const realmConfig = await realm();
      jwks ??= jose.createRemoteJWKSet(new URL(realmConfig.serverMetadata().jwks_uri));
      ({ payload: claims } = await jose.jwtVerify(logoutToken ?? '', jwks, {
        issuer: realmConfig.serverMetadata().issuer,
        audience: settings.clientId,
        typ: 'logout+jwt',
        requiredClaims: ['iat', 'jti', 'events'],
        currentDate: new Date(clock.nowMs()),
      }));
      if (!claims.events?.['http://schemas.openid.net/event/backchannel-logout']) throw new Error('not a logout token');
      if (claims.nonce !== undefined || (claims.sid === undefined && claims.sub === undefined)) throw new Error('not a logout token');
    } catch {
      return json(res, 400, { error: 'invalid_request' });
    }
    for (const [id, s] of sessions) {
      if (s.user && (claims.sid !== undefined ? s.sid === claims.sid : s.user.sub === claims.sub)) sessions.delete(id);
    }
    res.setHeader('cache-control', 'no-store');
    res.statusCode = 200;
    res.end();
  }
  let jwks;

  function home(req, res, s) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (!s.user) return res.end('<!doctype html><title>Web app</title><p><a href="/login">Sign in</a></p>');
    res.end(`<!doctype html><title>Web app</title><p>Signed in as ${escapeHtml(s.user.preferred_username ?? s.user.sub)}</p>
<p><a href="/profile">Profile</a></p>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}"><button>Sign out</button></form>`);
  }

  return http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    // From the realm's server, not a browser: no session cookie of its own.
    if (req.method === 'POST' && path === '/backchannel-logout') {
      return void backchannelLogout(req, res).catch(() => json(res, 400, { error: 'invalid_request' }));
    }
    const s = session(req, res);
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
