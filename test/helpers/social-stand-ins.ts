// Stand-ins for Microsoft's identity platform with Microsoft Graph, Facebook's Graph API and Bitbucket
// Cloud, for the tests of Keycloak's Microsoft, Facebook and Bitbucket identity providers: neither can be reached from here, and no
// independent implementation of their APIs runs locally. Each answers at the paths Keycloak's providers
// use, as their documentation describes them:
// - Microsoft: {base}/{tenant}/oauth2/v2.0/authorize and /token (JSON; a refused code is 400 invalid_grant,
//   AADSTS text in error_description); Graph's {api}/v1.0/me/ answers the user (id, displayName, givenName,
//   surname, mail, userPrincipalName), 401 InvalidAuthenticationToken for an unknown token.
//   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow
//   https://learn.microsoft.com/en-us/graph/api/user-get
// - Facebook: {api}/oauth/authorize and /oauth/access_token (JSON); {api}/me?fields=... answers only the
//   fields asked for (id always), 400 OAuthException code 190 for an unknown token.
//   https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
// - Bitbucket: {base}/site/oauth2/authorize and /access_token (JSON); {api}/2.0/user (type "user",
//   account_id, nickname, display_name) and /2.0/user/emails (paged: values with is_primary and
//   is_confirmed); 401 {type: "error"} for an unknown token.
//   https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/
import http from 'node:http';
import crypto from 'node:crypto';

export type StandInUser = Record<string, unknown> & { id: string };

export interface SocialStandIn {
  /** The sign-in address (Microsoft's login host; Facebook's Graph, which also serves the dialog). */
  baseUrl: string;
  /** The API address (Graph). */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the next visit of the authorization page; undefined: the user cancels. */
  nextUser: StandInUser | undefined;
  /** The API refuses every token (revoked at the provider meanwhile). */
  refuseApi: boolean;
  authorizations: Array<{ path: string; query: URLSearchParams }>;
  tokenRequests: Array<{ path: string; form: URLSearchParams }>;
  apiRequests: Array<{ path: string; query: URLSearchParams }>;
  close(): Promise<void>;
}

interface Flavor {
  /** The authorization and token paths: null when the path is not one of them. */
  authorize(path: string): boolean;
  token(path: string): boolean;
  /** The profile's answer to a GET of `url` for `user` (undefined: no such token), or null when `url` is not the profile's. */
  profile(url: URL, user: StandInUser | undefined): { status: number; body: unknown } | null;
}

const MICROSOFT: Flavor = {
  authorize: (path) => /^\/[A-Za-z0-9.-]+\/oauth2\/v2\.0\/authorize$/.test(path),
  token: (path) => /^\/[A-Za-z0-9.-]+\/oauth2\/v2\.0\/token$/.test(path),
  profile(url, user) {
    if (url.pathname !== '/graph/v1.0/me/' && url.pathname !== '/graph/v1.0/me') return null;
    if (!user) return { status: 401, body: { error: { code: 'InvalidAuthenticationToken', message: 'Access token validation failure.' } } };
    return { status: 200, body: { '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#users/$entity', businessPhones: [], jobTitle: null, mobilePhone: null, officeLocation: null, preferredLanguage: null, ...user } };
  },
};

const FACEBOOK: Flavor = {
  authorize: (path) => path === '/oauth/authorize',
  token: (path) => path === '/oauth/access_token',
  profile(url, user) {
    if (url.pathname !== '/me') return null;
    if (!user) return { status: 400, body: { error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190 } } };
    // Only the fields asked for (a nested field's name up to its braces), the id always.
    const fields = (url.searchParams.get('fields') ?? '').split(',').map((f) => f.replace(/[{(.].*$/, '')).filter((f) => f !== '');
    return { status: 200, body: Object.fromEntries(Object.entries(user).filter(([k]) => k === 'id' || fields.includes(k))) };
  },
};

/** A JSON answer. */
export const sendJson = (res: http.ServerResponse, status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));

/** An HTTP server listening on a free port of 127.0.0.1, and its address. */
export async function listenLocal(): Promise<{ server: http.Server; baseUrl: string; close: () => Promise<void> }> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A code's grant: who signed in, for which redirect URI, with which PKCE challenge. */
export interface CodeGrant<U> {
  user: U;
  redirectUri: string;
  challenge?: string;
}

/**
 * An authorization endpoint's answer, as every OAuth 2.0 provider gives it at once (the user signed in
 * and consented already): back to the redirect URI with a code for `user` (kept in `codes`) or, with no
 * user, access_denied; the state returned. A wrong client or redirect URI is a 400 page (RFC 6749 4.1.2.1).
 */
export function answerAuthorization<U>(res: http.ServerResponse, q: URLSearchParams, a: { clientId: string; redirectUri: string; user: U | undefined; codes: Map<string, CodeGrant<U>> }): void {
  const back = new URL(q.get('redirect_uri') ?? '', 'http://invalid');
  if (q.get('client_id') !== a.clientId || back.toString() !== a.redirectUri || q.get('response_type') !== 'code') return void res.writeHead(400).end('bad client, redirect_uri or response_type');
  if (a.user === undefined) {
    back.searchParams.set('error', 'access_denied');
    back.searchParams.set('error_description', 'The user has denied access to the scope requested by the client application.');
  } else {
    const code = crypto.randomBytes(16).toString('base64url');
    a.codes.set(code, { user: a.user, redirectUri: back.toString(), ...(q.get('code_challenge') ? { challenge: q.get('code_challenge')! } : {}) });
    back.searchParams.set('code', code);
  }
  back.searchParams.set('state', q.get('state') ?? '');
  res.writeHead(302, { location: back.toString() }).end();
}

const BITBUCKET: Flavor = {
  authorize: (path) => path === '/site/oauth2/authorize',
  token: (path) => path === '/site/oauth2/access_token',
  profile(url, user) {
    if (url.pathname !== '/api/2.0/user' && url.pathname !== '/api/2.0/user/emails') return null;
    if (!user) return { status: 401, body: { type: 'error', error: { message: 'Access token expired.' } } };
    const { emails, ...account } = user as StandInUser & { emails?: unknown[] };
    if (url.pathname === '/api/2.0/user/emails') return { status: 200, body: { pagelen: 10, values: emails ?? [], page: 1, size: (emails ?? []).length } };
    return { status: 200, body: { type: 'user', ...account } };
  },
};

async function start(flavor: Flavor, opts: { redirectUri: string; apiPath: string }): Promise<SocialStandIn> {
  const { server, baseUrl, close } = await listenLocal();
  const codes = new Map<string, CodeGrant<StandInUser>>();
  const tokens = new Map<string, StandInUser>();
  const s: SocialStandIn = {
    baseUrl,
    apiUrl: `${baseUrl}${opts.apiPath}`,
    clientId: crypto.randomUUID(),
    clientSecret: crypto.randomBytes(20).toString('base64url'),
    nextUser: undefined,
    refuseApi: false,
    authorizations: [],
    tokenRequests: [],
    apiRequests: [],
    close,
  };
  const json = sendJson;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', baseUrl);
    if (req.method === 'GET' && flavor.authorize(url.pathname)) {
      s.authorizations.push({ path: url.pathname, query: url.searchParams });
      return answerAuthorization(res, url.searchParams, { clientId: s.clientId, redirectUri: opts.redirectUri, user: s.nextUser, codes });
    }
    if (req.method === 'POST' && flavor.token(url.pathname)) {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        s.tokenRequests.push({ path: url.pathname, form });
        const code = form.get('code') ?? '';
        const grant = codes.get(code);
        codes.delete(code);
        if (form.get('client_id') !== s.clientId || form.get('client_secret') !== s.clientSecret) return json(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
        const verifier = form.get('code_verifier');
        const challengeOk = !grant?.challenge || (verifier !== null && crypto.createHash('sha256').update(verifier).digest('base64url') === grant.challenge);
        if (form.get('grant_type') !== 'authorization_code' || !grant || grant.redirectUri !== form.get('redirect_uri') || !challengeOk) {
          return json(res, 400, { error: 'invalid_grant', error_description: 'AADSTS70008: The provided authorization code or refresh token has expired or was redeemed.' });
        }
        const token = crypto.randomBytes(24).toString('base64url');
        tokens.set(token, grant.user);
        json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3599 });
      });
      return;
    }
    if (req.method === 'GET') {
      const user = s.refuseApi ? undefined : tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
      const answer = flavor.profile(url, user);
      if (answer) {
        s.apiRequests.push({ path: url.pathname, query: url.searchParams });
        return json(res, answer.status, answer.body);
      }
    }
    res.writeHead(404).end();
  });
  return s;
}

/** Microsoft's sign-in at {baseUrl}/{tenant}/oauth2/v2.0/..., Graph at {apiUrl} ({baseUrl}/graph). */
export const startMicrosoftStandIn = (opts: { redirectUri: string }): Promise<SocialStandIn> => start(MICROSOFT, { ...opts, apiPath: '/graph' });

/** Facebook's Graph API at {apiUrl} (its root): the dialog, the token endpoint and /me. */
export const startFacebookStandIn = (opts: { redirectUri: string }): Promise<SocialStandIn> => start(FACEBOOK, { ...opts, apiPath: '' });

/** Bitbucket Cloud: its authorization server at {baseUrl}/site/oauth2/..., its API at {apiUrl} ({baseUrl}/api). */
export const startBitbucketStandIn = (opts: { redirectUri: string }): Promise<SocialStandIn> => start(BITBUCKET, { ...opts, apiPath: '/api' });
