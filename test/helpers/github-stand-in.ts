// A stand-in for GitHub's OAuth apps and REST API, for the GitHub identity provider's tests: GitHub cannot
// be reached from here, and no independent implementation of its API runs locally. It answers as GitHub
// Enterprise Server does at {base}/login/oauth/... and {base}/api/v3/... (the paths Keycloak's GitHub
// provider appends to its baseUrl and apiUrl), with GitHub's documented quirks: the token endpoint answers
// form-encoded unless asked for JSON, and a refused code with 200 and an error member; the API refuses a
// request without a User-Agent (403) or with an unknown token (401).
// https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
import http from 'node:http';
import crypto from 'node:crypto';
import { answerAuthorization, listenLocal, sendJson, type CodeGrant } from './social-stand-ins.js';

export interface GitHubUser {
  id: number;
  login: string;
  name?: string | null;
  /** The public email (null when the user keeps it private). */
  email?: string | null;
  /** GET /user/emails. */
  emails?: Array<{ email: string; primary: boolean; verified: boolean }>;
}

export interface GitHubStandIn {
  baseUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** Who authorizes the app at the next visit of the authorization page; undefined: the user cancels. */
  nextUser: GitHubUser | undefined;
  /** The authorization requests (their query) and token requests (their form and Accept), newest last. */
  authorizations: URLSearchParams[];
  tokenRequests: Array<{ form: URLSearchParams; accept: string | undefined }>;
  /** Requests to the API: path and User-Agent. */
  apiRequests: Array<{ path: string; userAgent: string | undefined }>;
  close(): Promise<void>;
}

export async function startGitHubStandIn(opts: { redirectUri: string }): Promise<GitHubStandIn> {
  const { server, baseUrl, close } = await listenLocal();
  const codes = new Map<string, CodeGrant<GitHubUser>>();
  const tokens = new Map<string, GitHubUser>();
  const gh: GitHubStandIn = {
    baseUrl,
    apiUrl: `${baseUrl}/api/v3`,
    clientId: 'Iv1.stand-in',
    clientSecret: crypto.randomBytes(20).toString('hex'),
    nextUser: undefined,
    authorizations: [],
    tokenRequests: [],
    apiRequests: [],
    close,
  };
  const json = sendJson;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', baseUrl);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      gh.authorizations.push(url.searchParams);
      return answerAuthorization(res, url.searchParams, { clientId: gh.clientId, redirectUri: opts.redirectUri, user: gh.nextUser, codes });
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const accept = req.headers.accept;
        gh.tokenRequests.push({ form, accept });
        const wantsJson = accept?.includes('application/json') ?? false;
        const answer = (fields: Record<string, string>): void => {
          if (wantsJson) json(res, 200, fields);
          else res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }).end(new URLSearchParams(fields).toString());
        };
        const code = form.get('code') ?? '';
        const grant = codes.get(code);
        codes.delete(code);
        const verifier = form.get('code_verifier');
        if (form.get('client_id') !== gh.clientId || form.get('client_secret') !== gh.clientSecret) return answer({ error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
        const challengeOk = !grant?.challenge || (verifier !== null && crypto.createHash('sha256').update(verifier).digest('base64url') === grant.challenge);
        if (!grant || grant.redirectUri !== form.get('redirect_uri') || !challengeOk) return answer({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
        const token = `gho_${crypto.randomBytes(18).toString('hex')}`;
        tokens.set(token, grant.user);
        answer({ access_token: token, token_type: 'bearer', scope: 'user:email' });
      });
      return;
    }
    if (req.method === 'GET' && (url.pathname === '/api/v3/user' || url.pathname === '/api/v3/user/emails')) {
      gh.apiRequests.push({ path: url.pathname, userAgent: req.headers['user-agent'] });
      if (!req.headers['user-agent']) return json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
      const user = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/api/v3/user') return json(res, 200, { login: user.login, id: user.id, type: 'User', name: user.name ?? null, email: user.email ?? null });
      return json(res, 200, user.emails ?? []);
    }
    res.writeHead(404).end();
  });
  return gh;
}
