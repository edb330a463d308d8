// An upstream OpenID Connect provider for identity brokering tests: node-oidc-provider (an independent,
// certified implementation) over real HTTP, whose sign-in page is replaced by a test hook: the account
// set in `nextAccount` signs in and consents at once, or `access_denied` when none is set.
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

export interface UpstreamAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  given_name?: string;
  family_name?: string;
  /** Further claims, released with the profile scope when startUpstream names them in `extraClaims`. */
  [claim: string]: unknown;
}

/**
 * An account has names, as most providers' accounts do, unless the test says otherwise: a key of its own
 * (`given_name: undefined` for none). A provider's account without them is reviewed by the user before it
 * makes a user (Keycloak's first broker login "Review Profile"), which a test asks for by leaving them out.
 */
const named = (a: UpstreamAccount): UpstreamAccount => ({ given_name: 'Test', family_name: `User ${a.sub}`, ...a });

export interface Upstream {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the next visit of the provider's sign-in page; undefined: the user cancels. */
  nextAccount: UpstreamAccount | undefined;
  /** The authorization requests the provider received (their query), newest last. */
  requests: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * `claimsInIdToken`: the scopes' claims go in the ID token too, as Google's do (hd, email, name), not only
 * in the UserInfo response (node-oidc-provider's conformIdTokenClaims, OIDC Core 5.4).
 */
export async function startUpstream(opts: {
  redirectUri: string;
  authMethod?: 'client_secret_post' | 'client_secret_basic';
  pkceRequired?: boolean;
  idTokenAlg?: string;
  extraClaims?: string[];
  claimsInIdToken?: boolean;
  /** Scopes it knows besides openid, email and profile (released claims: none). */
  extraScopes?: string[];
  /** Claims the openid scope alone releases, as GitLab's (its UserInfo answers name, nickname, email... to openid). */
  openidClaims?: string[];
}): Promise<Upstream> {
  const accounts = new Map<string, UpstreamAccount>();
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const clientId = 'realmgate-broker';
  const clientSecret = crypto.randomBytes(24).toString('base64url');
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        token_endpoint_auth_method: opts.authMethod ?? 'client_secret_post',
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        id_token_signed_response_alg: opts.idTokenAlg ?? 'RS256',
      },
    ],
    jwks: { keys: [{ ...rsa.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: 'rsa1' }, { ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'ec1' }] },
    cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub', ...(opts.openidClaims ?? [])], email: ['email', 'email_verified'], profile: ['preferred_username', 'given_name', 'family_name', ...(opts.extraClaims ?? [])] },
    scopes: ['openid', 'email', 'profile', ...(opts.extraScopes ?? [])],
    conformIdTokenClaims: !opts.claimsInIdToken,
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => opts.pkceRequired ?? true },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const a = accounts.get(sub);
      return a ? { accountId: sub, claims: () => ({ ...a }) } : undefined;
    },
  });
  const callback = provider.callback();
  const upstream: Upstream = {
    issuer,
    clientId,
    clientSecret,
    nextAccount: undefined,
    requests: [],
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/auth') upstream.requests.push(url.searchParams);
    if (!url.pathname.startsWith('/interaction/')) return void callback(req, res);
    void (async () => {
      const details = (await provider.interactionDetails(req, res)) as { prompt: { name: string }; params: Record<string, unknown> };
      const account = upstream.nextAccount;
      if (!account) return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the user cancelled' }, { mergeWithLastSubmission: false });
      accounts.set(account.sub, named(account));
      if (details.prompt.name === 'login') return provider.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
      const grant = new provider.Grant({ accountId: account.sub, clientId });
      grant.addOIDCScope(String(details.params.scope));
      return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  return upstream;
}
