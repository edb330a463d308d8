/**
 * Fuzzing of the JSON protocol endpoints: the token endpoint (every grant type), the device
 * authorization endpoint, introspection, revocation and userinfo. Every response is checked by
 * harness.ts (no 5xx, RFC 6749 / 8628 / 7009 / 6750 error bodies, no-store); in addition, no forged,
 * random or mutated credential is ever accepted. At the end, the tokens issued before the fuzzing must
 * still work.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import { basic } from '../helpers/server.js';
import {
  applyOps,
  authSpec,
  bodyFor,
  bodyKind,
  clientId,
  contentType,
  dpopHeader,
  headerValue,
  junk,
  pct,
  queryOps,
  rarely,
  rawBytes,
  redirectUri,
  scope,
  serialization,
  serialize,
  tokenRef,
  type AuthSpec,
  type BodyKind,
  type Pair,
  type TokenRef,
} from './arbitraries.js';
import { DECOY_VERIFIER } from './constants.js';
import { assertGenuineTokensSurvive, clientAuth, fuzz, realmPath, reportStats, resolveToken, runs, startFuzzServer, type FuzzServer, type GenuineToken, type ResolvedToken } from './harness.js';

const OIDC = realmPath('/protocol/openid-connect');
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const EXCHANGE_ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

/** A JWT's payload, unverified (the oracle reads what the server issued), or undefined when it is none. */
function jwtClaims(token: string): Record<string, unknown> | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as unknown;
    return payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
const METHODS: HTTPMethods[] = ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'SEARCH'];

const method = fc.oneof({ weight: 12, arbitrary: fc.constant<HTTPMethods>('POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });

/** The realm part of the URL: mostly the test realm, sometimes another, unknown or broken one. */
const realmSegment = fc.oneof(
  { weight: 12, arbitrary: fc.constant('test') },
  { weight: 1, arbitrary: fc.constantFrom('other', 'TEST', 'nope', 'test%00', '%74est', 'te%2Fst', '..', 'test;x', `${'r'.repeat(257)}`, '%zz', 'test%20') },
);

const urlOf = (realm: string, path: string, query: string | null): string => `/auth/realms/${realm}/protocol/openid-connect${path}${query === null ? '' : `?${query}`}`;

function authHeader(fs: FuzzServer, a: AuthSpec): Record<string, string> {
  switch (a.kind) {
    case 'none':
      return {};
    case 'basic-right': {
      const c = fs.clients.get(a.client)!;
      return { authorization: basic(c.id, c.secret ?? '') };
    }
    case 'basic-wrong':
      // RFC 6749 2.3.1 encoding (with a percent-encoder that survives lone surrogates).
      return { authorization: `Basic ${Buffer.from(`${pct(a.client, true)}:${pct(a.secret, true)}`).toString('base64')}` };
    case 'basic-raw':
      return { authorization: `Basic ${Buffer.from(a.decoded).toString('base64')}` };
    case 'basic-encoded-raw':
      return { authorization: `Basic ${a.b64}` };
    case 'raw':
      return { authorization: a.value };
  }
}

/** client_id / client_secret in the body: absent, right (client_secret_post), wrong, or junk. */
const bodyClient = fc.option(
  fc.record({
    id: fc.option(clientId, { freq: 6 }),
    secret: fc.option(fc.oneof(fc.constant('$right'), junk), { freq: 2 }),
  }),
  { freq: 2 },
);

function bodyClientPairs(fs: FuzzServer, b: { id: string | null; secret: string | null } | null): Pair[] {
  if (!b) return [];
  const out: Pair[] = [];
  if (b.id !== null) out.push(['client_id', b.id]);
  if (b.secret !== null) out.push(['client_secret', b.secret === '$right' ? (fs.clients.get(b.id ?? '')?.secret ?? 'none') : b.secret]);
  return out;
}

const FORM = 'application/x-www-form-urlencoded';
const envelope = fc.record({
  method,
  realm: realmSegment,
  // Mostly well-formed (so that the grants are reached), else anything.
  body: fc.oneof({ weight: 3, arbitrary: fc.constant<BodyKind>('form') }, { weight: 1, arbitrary: bodyKind }),
  type: fc.oneof({ weight: 3, arbitrary: fc.constant<string | null>(FORM) }, { weight: 1, arbitrary: contentType }),
  serial: serialization,
  bytes: rawBytes,
  query: rarely(fc.tuple(junk, junk).map(([k, v]) => `${pct(k)}=${pct(v)}`), 8),
  extraHeaders: rarely(fc.dictionary(fc.constantFrom('accept', 'accept-charset', 'content-encoding', 'x-forwarded-for', 'x-forwarded-proto', 'origin', 'dpop', 'transfer-encoding', 'expect'), headerValue, { maxKeys: 2 }), 4),
  contentLength: rarely(fc.constantFrom('0', '1', '-1', 'abc', '99999999', ' 12', '12, 12', '1e3'), 20),
});
type Envelope = typeof envelope extends fc.Arbitrary<infer T> ? T : never;

function request(e: Envelope, path: string, pairs: Pair[], headers: Record<string, string>) {
  const payload = e.method === 'GET' || e.method === 'HEAD' ? undefined : bodyFor(e.body, pairs, e.serial, e.bytes);
  const query = e.method === 'GET' || e.method === 'HEAD' ? serialize(pairs, e.serial) : e.query;
  const extra = Object.fromEntries(Object.entries(e.extraHeaders ?? {}).filter(([k]) => k !== 'transfer-encoding' && k !== 'expect'));
  return {
    method: e.method,
    url: urlOf(e.realm, path, query),
    headers: { ...extra, ...(e.type === null || payload === undefined ? {} : { 'content-type': e.type }), ...(e.contentLength !== null && payload !== undefined ? { 'content-length': e.contentLength } : {}), ...headers },
    ...(payload !== undefined ? { payload } : {}),
  };
}

/** A decoy whose use succeeded is replaced by the new tokens, so that later runs can go on using it. */
function refreshDecoys(fs: FuzzServer, ref: TokenRef, body: Record<string, unknown>): void {
  if ((ref.ref === 'decoy' || ref.ref === 'code') && typeof body.refresh_token === 'string' && typeof body.access_token === 'string') {
    fs.decoys.set(ref.client, { access: body.access_token, refresh: body.refresh_token, ...(typeof body.id_token === 'string' ? { id: body.id_token } : {}) });
  }
}

/**
 * One part of the suite for one database (the token endpoint; the other JSON endpoints); one file per
 * part and database runs it, so that each stays within the runner's per-file time limit on a loaded
 * machine (the whole suite took 110 s of the 120 on PostgreSQL under `stress --cpu 2`).
 */
export function fuzzSuite(dialect: 'sqlite' | 'postgres', part: 'token' | 'others'): void {
  // The other part's tests are not registered at all (its own file runs them).
  const only = (name: 'token' | 'others') => (title: string, fn: (t: import('node:test').TestContext) => Promise<void>): void => {
    if (part === name) test(title, fn);
  };
  describe(`fuzz: JSON endpoints, ${part === 'token' ? 'token endpoint' : 'device, introspection, revocation, userinfo'} (${dialect})`, () => {
    let fs: FuzzServer;
    let genuine: GenuineToken[];
    before(async () => {
      ({ fs, genuine } = await startFuzzServer(dialect));
    });
    after(() => fs.ts.close());

    /**
     * The per-client secret failure limiter blocks a client for everyone after 100 failures a minute;
     * the manual clock moves a minute now and then so that the fuzz keeps reaching the grants.
     */
    let sinceTick = 0;
    async function tick(): Promise<void> {
      if (++sinceTick >= 150) {
        sinceTick = 0;
        fs.ts.clock.advance(61);
        await fs.renewDecoys();
      }
    }

    only('token')('token endpoint: every grant type, random bodies, content types and credentials', async (t) => {
      const spec = fc.record({
        grant: fc.oneof(
          { weight: 8, arbitrary: fc.constantFrom('authorization_code', 'refresh_token', DEVICE_GRANT) },
          { weight: 2, arbitrary: fc.constantFrom('password', 'client_credentials', 'implicit', 'REFRESH_TOKEN', 'refresh_token ', 'authorization_code\u0000', 'urn:ietf:params:oauth:grant-type:jwt-bearer', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:device_code:x', '') },
          { weight: 1, arbitrary: junk },
        ),
        artifact: tokenRef,
        artifactParam: rarely(fc.constantFrom('code', 'refresh_token', 'device_code', 'token', 'assertion'), 6),
        redirect: fc.option(redirectUri, { freq: 5 }),
        verifier: fc.option(fc.oneof(fc.constant(DECOY_VERIFIER), fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/), junk), { freq: 3 }),
        scope: fc.option(scope, { freq: 3 }),
        auth: authSpec,
        bodyClient,
        ops: queryOps(['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'device_code', 'client_id', 'client_secret'], {}, 4),
        envelope,
      });
      await fuzz(t, fs, 'token', spec, async (s, io) => {
        await tick();
        const artifact: ResolvedToken = await resolveToken(fs, s.artifact);
        const param = s.artifactParam ?? (s.grant === 'refresh_token' ? 'refresh_token' : s.grant === DEVICE_GRANT ? 'device_code' : 'code');
        const pairs: Pair[] = [['grant_type', s.grant], [param, artifact.value]];
        const redirect = s.redirect ?? (s.artifact.ref === 'code' ? fs.clients.get(s.artifact.client)?.redirectUris[0] : undefined);
        if (redirect !== undefined && s.grant !== 'refresh_token') pairs.push(['redirect_uri', redirect]);
        if (s.verifier !== null) pairs.push(['code_verifier', s.verifier]);
        if (s.scope !== null) pairs.push(['scope', s.scope]);
        pairs.push(...bodyClientPairs(fs, s.bodyClient));
        const req = request(s.envelope, '/token', applyOps(pairs, s.ops), authHeader(fs, s.auth));
        const res = await io.send(req);
        if (res.statusCode === 200) {
          // Only a credential the fuzz legitimately holds may be redeemed.
          if (!artifact.mayBeAccepted) io.fail('the token endpoint accepted a forged, random or mutated credential', { ...req, remoteAddress: io.address }, res);
          refreshDecoys(fs, s.artifact, res.json());
        }
      }, runs(4000));
    });

    only('token')('token endpoint: valid requests with one thing wrong', async (t) => {
      // A request that would succeed, but for one mutation of the credential or the client authentication.
      const spec = fc.record({
        grant: fc.constantFrom('authorization_code', 'refresh_token', DEVICE_GRANT),
        client: fc.constantFrom('web-app', 'native-app', 'rp', 'oob', 'post-app'),
        artifact: tokenRef,
        auth: fc.oneof({ weight: 4, arbitrary: fc.constant<AuthSpec | null>(null) }, { weight: 1, arbitrary: authSpec }),
        ops: queryOps(['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'device_code', 'client_id', 'client_secret'], { redirect_uri: redirectUri, scope }, 2),
        // RFC 9449: now and then a DPoP header that is not a valid proof (the request must then fail).
        dpop: rarely(dpopHeader, 4),
      });
      await fuzz(t, fs, 'token-near-valid', spec, async (s, io) => {
        await tick();
        const c = fs.clients.get(s.client)!;
        const ref: TokenRef =
          s.artifact.ref === 'decoy'
            ? { ...s.artifact, client: s.client, kind: s.grant === 'refresh_token' ? 'refresh' : s.artifact.kind }
            : s.artifact.ref === 'code'
              ? { ...s.artifact, client: s.client }
              : s.artifact;
        const artifact = await resolveToken(fs, ref);
        const param = s.grant === 'refresh_token' ? 'refresh_token' : s.grant === DEVICE_GRANT ? 'device_code' : 'code';
        const pairs: Pair[] = [['grant_type', s.grant], [param, artifact.value]];
        if (s.grant === 'authorization_code') pairs.push(['redirect_uri', c.redirectUris[0]!]);
        if (s.grant === 'authorization_code' && c.public) pairs.push(['code_verifier', DECOY_VERIFIER]);
        let headers: Record<string, string> = {};
        if (s.auth) headers = authHeader(fs, s.auth);
        else if (c.public) pairs.push(['client_id', c.id]);
        else if (c.authMethod === 'client_secret_post') pairs.push(['client_id', c.id], ['client_secret', c.secret!]);
        else headers = { authorization: basic(c.id, c.secret!) };
        if (s.dpop !== null) headers = { ...headers, dpop: s.dpop };
        const req = { method: 'POST' as const, url: `${OIDC}/token`, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: serialize(applyOps(pairs, s.ops), { modes: ['enc'], garbage: null, garbageAt: 0 }) };
        const res = await io.send(req);
        if (res.statusCode === 200) {
          if (!artifact.mayBeAccepted) io.fail('the token endpoint accepted a forged, random or mutated credential', { ...req, remoteAddress: io.address }, res);
          if (s.dpop !== null) io.fail('the token endpoint accepted a DPoP header that is not a valid proof', { ...req, remoteAddress: io.address }, res);
          refreshDecoys(fs, ref, res.json());
        }
      }, runs(2000));
    });

    only('others')('device authorization endpoint: clients, scopes, bodies and credentials', async (t) => {
      const spec = fc.record({
        client: fc.option(clientId, { freq: 4 }),
        secret: fc.option(fc.oneof(fc.constant('$right'), junk)),
        scope: fc.option(scope, { freq: 3 }),
        auth: authSpec,
        ops: queryOps(['client_id', 'client_secret', 'scope', 'audience', 'resource'], { scope }, 3),
        envelope,
        path: fc.constantFrom('/auth/device', '/auth/device', '/auth/device', '/auth/device/', '/auth/DEVICE', '/auth/device/x'),
      });
      await fuzz(t, fs, 'device-authorization', spec, async (s, io) => {
        await tick();
        const pairs: Pair[] = [...bodyClientPairs(fs, { id: s.client, secret: s.secret })];
        if (s.scope !== null) pairs.push(['scope', s.scope]);
        await io.send(request(s.envelope, s.path, applyOps(pairs, s.ops), authHeader(fs, s.auth)));
      }, runs(1200));
    });

    only('token')('token exchange (RFC 8693): subject tokens real, forged and mutated; audiences, scopes, token types, actors', async (t) => {
      const spec = fc.record({
        // Mostly a client with the exchange on (rp, post-app), authenticated as registered.
        requester: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('rp', 'post-app') }, { weight: 1, arbitrary: fc.constantFrom('web-app', 'native-app', 'oob') }),
        auth: rarely(authSpec, 5),
        // Mostly the requester's own access token (it is the token's azp), else any token of the fuzz.
        own: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 2, arbitrary: fc.constant(false) }),
        subject: tokenRef,
        subjectType: fc.option(fc.oneof({ weight: 4, arbitrary: fc.constant(EXCHANGE_ACCESS) }, { weight: 1, arbitrary: fc.constantFrom('urn:ietf:params:oauth:token-type:refresh_token', 'urn:ietf:params:oauth:token-type:id_token', 'urn:ietf:params:oauth:token-type:jwt', `${EXCHANGE_ACCESS} `, '') }, { weight: 1, arbitrary: junk }), { freq: 10 }),
        requestedType: fc.option(fc.oneof(fc.constantFrom(EXCHANGE_ACCESS, 'urn:ietf:params:oauth:token-type:refresh_token', 'urn:ietf:params:oauth:token-type:id_token', 'urn:ietf:params:oauth:token-type:saml2'), junk), { freq: 2 }),
        audiences: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('web-app', 'rp', 'post-app', 'native-app', 'oob', 'account', 'nope', '') }, { weight: 1, arbitrary: junk }), { minLength: 1, maxLength: 3 }) }),
        scope: fc.option(fc.oneof(fc.constantFrom('openid', 'core_data', 'openid core_data', 'offline_access', 'exports', 'profile email'), scope), { freq: 2 }),
        actor: rarely(tokenRef, 12),
        extra: rarely(fc.constantFrom('requested_subject', 'requested_issuer', 'subject_issuer', 'resource', 'actor_token_type'), 10),
        ops: queryOps(['grant_type', 'subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'scope'], {}, 2),
        envelope,
      });
      await fuzz(t, fs, 'token-exchange', spec, async (s, io) => {
        await tick();
        const requester = fs.clients.get(s.requester)!;
        const subjectRef: TokenRef = s.own && fs.decoys.has(s.requester) ? { ref: 'decoy', client: s.requester, kind: 'access', mutation: null } : s.subject;
        const subject = await resolveToken(fs, subjectRef);
        const pairs: Pair[] = [['grant_type', EXCHANGE_GRANT], ['subject_token', subject.value]];
        if (s.subjectType !== null) pairs.push(['subject_token_type', s.subjectType]);
        if (s.requestedType !== null) pairs.push(['requested_token_type', s.requestedType]);
        for (const a of s.audiences) pairs.push(['audience', a]);
        if (s.scope !== null) pairs.push(['scope', s.scope]);
        if (s.actor !== null) pairs.push(['actor_token', (await resolveToken(fs, s.actor)).value]);
        if (s.extra !== null) pairs.push([s.extra, s.extra === 'resource' ? 'https://api.example.com' : 'x']);
        let headers: Record<string, string>;
        if (s.auth === null) {
          const a = clientAuth(requester);
          headers = a.headers;
          pairs.push(...Object.entries(a.form));
        } else headers = authHeader(fs, s.auth);
        const req = request(s.envelope, '/token', applyOps(pairs, s.ops), headers);
        const res = await io.send(req);
        if (res.statusCode !== 200) return;
        const sent = { ...req, remoteAddress: io.address };
        // Only a real access token of this realm, unchanged in substance, may be exchanged.
        const subjectClaims = jwtClaims(subject.value);
        if (!subject.mayBeAccepted || subjectRef.ref !== 'decoy' || subjectRef.kind !== 'access' || !subjectClaims) io.fail('an exchange of a forged, random, mutated or non-access subject token succeeded', sent, res);
        const body = res.json() as Record<string, unknown>;
        if (body.issued_token_type !== EXCHANGE_ACCESS || typeof body.access_token !== 'string') io.fail('an exchange answer without issued_token_type access_token', sent, res);
        const issued = jwtClaims(body.access_token as string);
        // RFC 8693 5: the new token is the same user's and never widens the subject token's scopes.
        if (!issued || issued.sub !== subjectClaims!.sub) io.fail("an exchanged token of another user than the subject token's", sent, res);
        const had = String(subjectClaims!.scope ?? '').split(' ');
        if (String(issued!.scope ?? '').split(' ').some((x) => x !== '' && !had.includes(x))) io.fail("an exchanged token with scopes beyond the subject token's", sent, res);
        if (!['rp', 'post-app'].includes(String(issued!.azp))) io.fail('an exchange by a client without standard token exchange', sent, res);
      }, runs(1500));
    });

    only('others')('introspection and revocation: tokens real, forged and mutated, and client credentials', async (t) => {
      const spec = fc.record({
        endpoint: fc.constantFrom('/token/introspect', '/token/introspect', '/revoke', '/revoke', '/token/introspect/', '/revoke/x'),
        token: tokenRef,
        hint: fc.option(fc.oneof(fc.constantFrom('access_token', 'refresh_token', 'id_token', 'ACCESS_TOKEN', 'device_code', ''), junk)),
        auth: authSpec,
        // Half of the time the client the token was issued to, authenticated as registered.
        owner: fc.boolean(),
        bodyClient,
        ops: queryOps(['token', 'token_type_hint', 'client_id', 'client_secret'], {}, 3),
        envelope,
      });
      await fuzz(t, fs, 'introspection-revocation', spec, async (s, io) => {
        await tick();
        const token = await resolveToken(fs, s.token);
        const pairs: Pair[] = [['token', token.value]];
        if (s.hint !== null) pairs.push(['token_type_hint', s.hint]);
        const owner = s.owner && 'client' in s.token ? fs.clients.get(s.token.client) : undefined;
        let headers = authHeader(fs, s.auth);
        if (owner) {
          const a = clientAuth(owner);
          headers = a.headers;
          pairs.push(...Object.entries(a.form));
        } else pairs.push(...bodyClientPairs(fs, s.bodyClient));
        const req = request(s.envelope, s.endpoint, applyOps(pairs, s.ops), headers);
        const res = await io.send(req);
        if (s.endpoint.startsWith('/token/introspect') && res.statusCode === 200) {
          const body = res.json() as { active?: unknown };
          if (body.active !== true && body.active !== false) io.fail('an introspection response without a boolean active', { ...req, remoteAddress: io.address }, res);
          if (body.active === true && !token.mayBeAccepted) io.fail('introspection said a forged, random or mutated token is active', { ...req, remoteAddress: io.address }, res);
        }
        if (s.endpoint.startsWith('/revoke') && res.statusCode === 200 && res.body !== '') io.fail('a revocation success with a body', { ...req, remoteAddress: io.address }, res);
      }, runs(2500));
    });

    only('others')('userinfo: bearer tokens in the header, the body and the query', async (t) => {
      const spec = fc.record({
        method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<HTTPMethods>('GET', 'POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        header: fc.oneof(
          { weight: 5, arbitrary: fc.record({ kind: fc.constant('bearer' as const), token: tokenRef, scheme: fc.constantFrom('Bearer', 'Bearer', 'bearer', 'BEARER', 'Bearer  ', 'Bearer\t', 'Basic', 'DPoP', 'Bearer x') }) },
          { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: headerValue }) },
          { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
        ),
        bodyToken: rarely(tokenRef, 3),
        queryToken: rarely(tokenRef, 6),
        dpop: rarely(dpopHeader, 3),
        ops: queryOps(['access_token'], {}, 2),
        envelope,
      });
      await fuzz(t, fs, 'userinfo', spec, async (s, io) => {
        let headerToken: ResolvedToken | undefined;
        const headers: Record<string, string> = {};
        if (s.header.kind === 'bearer') {
          headerToken = await resolveToken(fs, s.header.token);
          headers.authorization = `${s.header.scheme} ${headerToken.value}`;
        } else if (s.header.kind === 'raw') headers.authorization = s.header.value;
        if (s.dpop !== null) headers.dpop = s.dpop;
        const bodyToken = s.bodyToken ? await resolveToken(fs, s.bodyToken) : undefined;
        const queryToken = s.queryToken ? await resolveToken(fs, s.queryToken) : undefined;
        const pairs = applyOps(bodyToken ? [['access_token', bodyToken.value]] : [], s.ops);
        const e = { ...s.envelope, method: s.method, query: queryToken ? `access_token=${pct(queryToken.value)}` : s.envelope.query };
        const req = request(e, '/userinfo', pairs, headers);
        const res = await io.send(req);
        if (res.statusCode === 200) {
          // Accepted: the token that was used must be a decoy held legitimately (header, or form body).
          const used = [headerToken, bodyToken].filter((x): x is ResolvedToken => x !== undefined);
          if (!used.some((x) => x.mayBeAccepted)) io.fail('userinfo accepted a forged, random or mutated token', { ...req, remoteAddress: io.address }, res);
        }
      }, runs(2000));
    });

    // Keycloak's account REST API (src/http/account/rest.ts): reads with any token, changes only with
    // tokens no server may accept (a decoy's own token would sign out or revoke what the last test
    // checks survives). Never a 5xx (fuzz checks every response), and a 2xx only with a token that may be
    // accepted: a change never succeeds.
    only('others')('account REST API: bearer tokens real, forged and mutated on its paths', async (t) => {
      const spec = fc.record({
        method: fc.oneof({ weight: 5, arbitrary: fc.constant<HTTPMethods>('GET') }, { weight: 2, arbitrary: fc.constantFrom<HTTPMethods>('DELETE', 'PUT', 'POST', 'OPTIONS', 'HEAD', 'PATCH') }),
        path: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('/sessions', '/sessions/devices', '/sessions/x', '/credentials', '/credentials/x', '/credentials/x/label', '/applications', '/applications/rp/consent', '/applications/nope/consent', '/linked-accounts', '/linked-accounts/x', '/groups', '/organizations', '/supportedLocales') },
          { weight: 1, arbitrary: fc.constantFrom('/sessions/%00', '/applications/%2e%2e/consent', '/credentials//label', '/sessions/' + 'x'.repeat(300), '/linked-accounts/%ZZ', '/groups/', '/Sessions') },
        ),
        query: rarely(fc.oneof(fc.constantFrom('current=true', 'current=TRUE', 'type=otp', 'user-credentials=false', 'linked=true', 'linked=false', 'name=r', 'name=%ZZ', 'type=&type='), junk), 2),
        token: tokenRef,
        scheme: fc.constantFrom('Bearer', 'Bearer', 'bearer', 'Basic', 'Bearer  '),
        body: rarely(fc.oneof(fc.constantFrom('"label"', '{"', '[]', 'null', '"' + 'x'.repeat(300) + '"'), junk), 2),
      });
      await fuzz(t, fs, 'account-rest', spec, async (s, io) => {
        await tick();
        const changes = s.method === 'DELETE' || s.method === 'PUT' || s.method === 'POST' || s.method === 'PATCH';
        // A change goes with a decoy only when changed in substance (or another kind of token).
        const ref: TokenRef = changes && s.token.ref === 'decoy' && s.token.mutation === null ? { ...s.token, mutation: { op: 'truncate', n: 5 } } : s.token;
        const token = await resolveToken(fs, ref);
        const req = {
          method: s.method,
          url: `${realmPath('/account')}${s.path}${s.query === null ? '' : `?${s.query}`}`,
          headers: { authorization: `${s.scheme} ${token.value}`, accept: 'application/json', ...(s.body !== null && changes ? { 'content-type': 'application/json' } : {}) },
          ...(s.body !== null && changes ? { payload: s.body } : {}),
        };
        const res = await io.send(req);
        const sent = { ...req, remoteAddress: io.address };
        if (res.statusCode >= 200 && res.statusCode < 300 && s.method !== 'OPTIONS') {
          if (!token.mayBeAccepted) io.fail('the account API accepted a forged, random or mutated token', sent, res);
        }
      }, runs(500));
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      reportStats(t, fs);
      await assertGenuineTokensSurvive(fs, genuine);
    });
  });
}
