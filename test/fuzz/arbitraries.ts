/**
 * Generators of malformed and mutated request parts for the fuzz suite: hostile strings, query strings
 * mutated from valid ones, redirect URI variants, content types, bodies, Authorization headers, cookies,
 * and mutations of tokens. Everything generated is plain data (printable in a counterexample); tokens
 * are referred to symbolically (`TokenRef`) and resolved against the decoys at run time.
 */
import fc from 'fast-check';
import { OOB } from './constants.js';

// ---------------------------------------------------------------------------------------------------
// Strings

/** Markup that must never come back unescaped (see INJECTED_MARKUP in harness.ts). */
export const XSS = [
  '<script>xss()</script>',
  '"><script>xss()</script>',
  "'><img src=x onerror=xss()>",
  '</title><script>xss()</script>',
  '<svg/onload=xss()>',
  '" onmouseover="xss()',
  "' onfocus='xss()",
  '<b>xss</b>',
];

const SPECIAL = [
  '',
  ' ',
  '  ',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e309',
  'NaN',
  '[]',
  '{}',
  '[object Object]',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '\u0000',
  'a\u0000b',
  '\r\n',
  '\t',
  '\u202e',
  '\ufeff',
  '\u00a0',
  '\u2028',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  'İ',
  'ß',
  '..',
  '../',
  '/',
  '//evil.example',
  '\\\\evil.example',
  'javascript:alert(1)',
  'data:text/html,<script>xss()</script>',
  'https://evil.example/',
  '${7*7}',
  '{{7*7}}',
  "' OR '1'='1",
  '"; DROP TABLE clients; --',
  '%s%s%s%n',
];

export const percentGarbage: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom('%', '%%', '%0', '%zz', '%G1', '%C3', '%C3%28', '%ED%A0%80', '%F0%9F%98', '%FF', '%00', '%0A', '%0D%0A', '%2F', '%3F', '%23', '%26', '%3D', '%2B', '%25', '%u0041', '%E2%80%AE', '%C0%AF', '%2e%2e'),
      fc.string({ maxLength: 3 }),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''));

const longString: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(255, 256, 257, 1024, 2049, 4097, 8192, 8193, 16_000), fc.constantFrom('a', 'é', '%', '<', '0', ' ', '😀'))
  .map(([n, c]) => c.repeat(n));

const controlString = fc.string({ unit: fc.constantFrom('\u0000', '\u0001', '\u001f', '\u007f', '\r', '\n', '\t', ' ', '%', '+', '&', '=', '#', '?', '/', '\\', '"', "'", '<', '>', '\u202e', '\ufeff', '\ud800', '\udfff', '\u0085'), maxLength: 8 });

/** A value a client, a browser or an attacker might send: plausible, broken, or hostile. */
/**
 * `arb` once in `oneIn` values, null otherwise: for what should be rare. (fc.option is the other way
 * round: its `freq` makes null the value once in `freq`; written as "rare", it made a junk
 * Content-Length, a junk query, extra headers and others the rule, and most token requests of the fuzz
 * ended at "body size did not match Content-Length" before any grant.)
 */
export function rarely<T>(arb: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
}

export const junk: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 2, arbitrary: fc.constantFrom(...XSS) },
  { weight: 2, arbitrary: percentGarbage },
  { weight: 1, arbitrary: longString },
  { weight: 2, arbitrary: controlString },
  { weight: 1, arbitrary: fc.base64String({ maxLength: 60 }) },
);

/** Parameter names: the real ones, their near misses, and garbage. */
export const paramName = (real: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    { weight: 2, arbitrary: fc.constantFrom(...real).map((n) => n.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...real).map((n) => `${n}[]`) },
    { weight: 1, arbitrary: fc.constantFrom(...real).map((n) => ` ${n}`) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', '=', '&', 'a[b]', 'a.b') },
    { weight: 2, arbitrary: junk },
  );

// ---------------------------------------------------------------------------------------------------
// Query strings

export type Pair = [string, string];

export type QueryOp =
  | { op: 'drop'; i: number }
  | { op: 'dup'; i: number; value: string | null }
  | { op: 'empty'; i: number }
  | { op: 'junk'; i: number; value: string }
  | { op: 'rename'; i: number; key: string }
  | { op: 'set'; key: string; value: string }
  | { op: 'add'; key: string; value: string }
  | { op: 'swap'; i: number; j: number };

export function applyOps(pairs: Pair[], ops: readonly QueryOp[]): Pair[] {
  let out = pairs.map((p) => [...p] as Pair);
  for (const o of ops) {
    const at = (i: number): number => (out.length === 0 ? -1 : i % out.length);
    switch (o.op) {
      case 'drop':
        if (out.length > 0) out.splice(at(o.i), 1);
        break;
      case 'dup':
        if (out.length > 0) {
          const p = out[at(o.i)]!;
          out.push([p[0], o.value ?? p[1]]);
        }
        break;
      case 'empty':
        if (out.length > 0) out[at(o.i)]![1] = '';
        break;
      case 'junk':
        if (out.length > 0) out[at(o.i)]![1] = o.value;
        break;
      case 'rename':
        if (out.length > 0) out[at(o.i)]![0] = o.key;
        break;
      case 'set': {
        const i = out.findIndex((p) => p[0] === o.key);
        if (i >= 0) out[i]![1] = o.value;
        else out.push([o.key, o.value]);
        break;
      }
      case 'add':
        out.push([o.key, o.value]);
        break;
      case 'swap':
        if (out.length > 1) {
          const a = at(o.i);
          const b = at(o.j);
          [out[a], out[b]] = [out[b]!, out[a]!];
        }
        break;
    }
  }
  out = out.filter((p) => p !== undefined);
  return out;
}

/** Generic mutations of a list of parameters; `setters` give field-aware values for named parameters. */
export function queryOps(names: readonly string[], setters: Record<string, fc.Arbitrary<string>> = {}, maxLength = 5): fc.Arbitrary<QueryOp[]> {
  const setterKeys = Object.keys(setters);
  const op: fc.Arbitrary<QueryOp> = fc.oneof(
    { weight: 2, arbitrary: fc.record({ op: fc.constant('drop' as const), i: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('dup' as const), i: fc.nat(), value: fc.option(junk) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('empty' as const), i: fc.nat() }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('junk' as const), i: fc.nat(), value: junk }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('rename' as const), i: fc.nat(), key: paramName(names) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('add' as const), key: paramName(names), value: junk }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('swap' as const), i: fc.nat(), j: fc.nat() }) },
    ...(setterKeys.length > 0
      ? [{ weight: 6, arbitrary: fc.constantFrom(...setterKeys).chain((key) => setters[key]!.map((value) => ({ op: 'set' as const, key, value }))) }]
      : []),
  );
  return fc.array(op, { maxLength });
}

/** Percent-encodes the UTF-8 bytes of `s` (a lone surrogate becomes U+FFFD, as a browser sends it). */
export function pct(s: string, plusForSpace = false): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    if ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x2e || b === 0x5f || b === 0x7e) out += String.fromCharCode(b);
    else if (b === 0x20 && plusForSpace) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export interface Serialization {
  /** Per pair, cycling: percent-encoded, '+' for spaces, or raw (unencoded, as a sloppy client would). */
  modes: Array<'enc' | 'plus' | 'raw'>;
  /** Garbage inserted among the pairs: percent soup, stray separators. */
  garbage: string | null;
  garbageAt: number;
}

export const serialization: fc.Arbitrary<Serialization> = fc.record({
  modes: fc.array(fc.constantFrom('enc' as const, 'enc' as const, 'plus' as const, 'raw' as const), { minLength: 1, maxLength: 4 }),
  garbage: fc.option(fc.oneof(percentGarbage, fc.constantFrom('&', '&&', '=', '==', '&=&', 'a=b=c', ';', '?', '#x', 'a', '=x')), { freq: 3 }),
  garbageAt: fc.nat(),
});

export function serialize(pairs: readonly Pair[], s: Serialization): string {
  const parts = pairs.map(([k, v], i) => {
    const mode = s.modes[i % s.modes.length] ?? 'enc';
    if (mode === 'raw') return `${k}=${v}`;
    return `${pct(k, mode === 'plus')}=${pct(v, mode === 'plus')}`;
  });
  if (s.garbage !== null) parts.splice(s.garbageAt % (parts.length + 1), 0, s.garbage);
  return parts.join('&');
}

// ---------------------------------------------------------------------------------------------------
// Field-aware values

const REGISTERED = ['https://app.example.com/callback', 'http://127.0.0.1:9999/cb', 'http://127.0.0.1/callback', 'https://rp.example/cb?tenant=1', 'com.example.app:/oauth2redirect', OOB, 'https://post.example/cb'];

const REDIRECT_TRICKS = [
  'HTTPS://APP.EXAMPLE.COM/callback',
  'https://app.example.com/Callback',
  'https://app.example.com:443/callback',
  'https://app.example.com/callback/',
  'https://app.example.com//callback',
  'https://app.example.com/./callback',
  'https://app.example.com/callback/../evil',
  'https://app.example.com.evil.example/callback',
  'https://app.example.com@evil.example/callback',
  'https://evil.example/callback',
  'https://evil.example\\@app.example.com/callback',
  '//app.example.com/callback',
  '//evil.example/callback',
  '/callback',
  'app.example.com/callback',
  'http://app.example.com/callback',
  'https://rp.example/cb',
  'https://rp.example/cb?tenant=2',
  'https://rp.example/cb?tenant=1&x=1',
  'https://rp.example/cb?tenant=1#x',
  'com.example.app://oauth2redirect',
  'com.example.app:/oauth2redirect/../x',
  'http://[::1]/callback',
  'http://[::1]:9999/cb',
  'http://localhost/callback',
  'http://localhost:9999/cb',
  'http://127.0.0.2/callback',
  'http://127.1/callback',
  'http://0x7f000001/callback',
  'http://2130706433/callback',
  'http://127.0.0.1.evil.example/callback',
  'http://127.0.0.1:9999@evil.example/cb',
  'http://127.0.0.1:9999/cb/..',
  'http://127.0.0.1:9999/cb?',
  'http://127.0.0.1:9999/cb#',
  'https://127.0.0.1/callback',
  'javascript:alert(1)',
  'javascript://app.example.com/%0aalert(1)',
  'data:text/html,<script>xss()</script>',
  'urn:ietf:wg:oauth:2.0:oob:auto',
  'URN:IETF:WG:OAUTH:2.0:OOB',
  'http://localhost:8080/authentication_code',
  'http://localhost:8080/auth/realms/test/account',
  '/auth/realms/test/account',
];

const charEdit = fc.record({ kind: fc.constantFrom('insert', 'delete', 'replace'), at: fc.nat(), ch: fc.oneof(fc.constantFrom('/', '.', '@', '?', '#', '&', '%', ':', '\\', ' ', '\u0000', 'é', 'x', '0', '\n'), fc.string({ minLength: 1, maxLength: 1 })) });

function editChars(s: string, e: { kind: string; at: number; ch: string }): string {
  const i = e.at % (s.length + 1);
  if (e.kind === 'insert') return s.slice(0, i) + e.ch + s.slice(i);
  if (e.kind === 'delete') return s.slice(0, i) + s.slice(i + 1);
  return s.slice(0, i) + e.ch + s.slice(i + 1);
}

/** Redirect URIs: the registered ones, their near misses, loopback port games, and garbage. */
export const redirectUri: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...REGISTERED) },
  { weight: 4, arbitrary: fc.constantFrom(...REDIRECT_TRICKS) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...REGISTERED), fc.array(charEdit, { minLength: 1, maxLength: 3 })).map(([r, edits]) => edits.reduce(editChars, r)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('127.0.0.1', '[::1]', 'localhost', '127.0.0.01'), fc.constantFrom('', ':0', ':1', ':80', ':9999', ':65535', ':65536', ':99999', ':00080', ':+80', ':-1', ': 80', ':', ':8o'), fc.constantFrom('/callback', '/cb', '/callback?', '/callback/', '/CALLBACK', '', '?x=/callback'))
      .map(([h, p, path]) => `http://${h}${p}${path}`),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...REGISTERED), fc.constantFrom('/', '/..', '/../evil', '?', '#', '#x', '?x=1', '&x=1', '%00', ' ', '.evil.example', '@evil.example', '%2F..%2F', '/%2e%2e/', '\u0000', '\n', '%0d%0aSet-Cookie:x=1')).map(([r, s]) => r + s) },
  { weight: 2, arbitrary: junk },
);

export const clientId: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('web-app', 'native-app', 'rp', 'oob', 'post-app') },
  { weight: 2, arbitrary: fc.constantFrom('WEB-APP', 'web-app ', ' web-app', 'web-app\u0000', 'web%2Dapp', 'nope', 'account', 'admin-cli', 'other', 'web-app\n') },
  { weight: 2, arbitrary: junk },
);

export const scope: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('openid', 'openid core_data offline_access', 'core_data', 'openid profile email', 'openid openid', 'admin', 'openid admin', 'openid  core_data', '\topenid', 'openid\u00a0core_data', 'OPENID', 'exports offline_access', ' openid', 'openid ') },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('openid', 'profile', 'email', 'core_data', 'exports', 'offline_access', 'admin', '', 'x'), { maxLength: 40 }).map((a) => a.join(' ')) },
  { weight: 2, arbitrary: junk },
);

/**
 * Forged request objects (RFC 9101): JWT-shaped, claims naming a client, a redirect URI and the realm,
 * with alg none, HMAC or an asymmetric alg and a signature no client key made; sometimes mutated further
 * (a dot, a truncation, a swapped segment). None may be accepted or redirect anywhere: the harness's
 * oracle holds as for any request (the fuzz clients have no registered keys).
 */
export const forgedRequestObject: fc.Arbitrary<string> = fc
  .record({
    alg: fc.constantFrom('none', 'HS256', 'ES256', 'RS256', 'PS256', 'EdDSA', ''),
    clientId,
    redirectUri,
    scope,
    aud: fc.constantFrom('http://localhost:8080/auth/realms/fuzz', 'https://evil.example/', ''),
    nested: fc.constantFrom(undefined, 'request', 'request_uri'),
    signature: fc.constantFrom('', 'AAAA', 'x'.repeat(86), 'e30'),
    mutation: fc.option(tokenMutationLate(), { freq: 3 }),
  })
  .map((r) => {
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims: Record<string, unknown> = { iss: r.clientId, client_id: r.clientId, aud: r.aud, response_type: 'code', redirect_uri: r.redirectUri, scope: r.scope, state: 'forged', exp: 4102444800 };
    if (r.nested) claims[r.nested] = 'x';
    const jwt = `${b64({ alg: r.alg, typ: 'oauth-authz-req+jwt' })}.${b64(claims)}.${r.alg === 'none' ? '' : r.signature}`;
    return r.mutation === null ? jwt : mutateToken(jwt, r.mutation).value;
  });

export const AUTHORIZE_PARAMS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'nonce', 'response_mode', 'prompt', 'max_age', 'login_hint', 'ui_locales', 'display', 'request', 'request_uri', 'claims', 'id_token_hint'];

export const authorizeSetters: Record<string, fc.Arbitrary<string>> = {
  client_id: clientId,
  redirect_uri: redirectUri,
  scope,
  response_type: fc.oneof(fc.constantFrom('code', 'token', 'id_token', 'code id_token', 'CODE', 'code ', 'none', 'code code'), junk),
  response_mode: fc.oneof(fc.constantFrom('query', 'fragment', 'form_post', 'jwt', 'QUERY'), junk),
  state: junk,
  nonce: junk,
  code_challenge: fc.oneof(fc.constantFrom('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'a'.repeat(43), 'a'.repeat(42), 'a'.repeat(128), 'a'.repeat(129), '='.repeat(43), `${'a'.repeat(42)}+`), junk),
  code_challenge_method: fc.oneof(fc.constantFrom('S256', 's256', 'plain', 'PLAIN', 'S512', 'S256 '), junk),
  prompt: fc.oneof(fc.constantFrom('none', 'login', 'consent', 'select_account', 'none login', 'login consent', 'NONE', 'none ', ' login', 'create'), junk),
  max_age: fc.oneof(fc.constantFrom('0', '1', '-1', '1e3', '99999999999', '9999999999', '00', ' 5', '3600'), junk),
  login_hint: fc.oneof(fc.constantFrom(...XSS), junk),
  ui_locales: junk,
  display: junk,
  request: fc.oneof(junk, forgedRequestObject),
  claims: junk,
};

/** Base (valid) authorization requests, one per client. */
export function validAuthorizePairs(clientId: string, redirect: string, pkceChallenge?: string): Pair[] {
  const pairs: Pair[] = [
    ['client_id', clientId],
    ['redirect_uri', redirect],
    ['response_type', 'code'],
    ['scope', 'openid core_data offline_access'],
    ['state', 'st-1'],
  ];
  if (pkceChallenge) pairs.push(['code_challenge', pkceChallenge], ['code_challenge_method', 'S256']);
  return pairs;
}

// ---------------------------------------------------------------------------------------------------
// Content types and bodies

export type BodyKind = 'form' | 'json' | 'json-array' | 'json-scalar' | 'json-broken' | 'json-deep' | 'text' | 'multipart' | 'bytes' | 'empty' | 'huge' | 'many-params';

export const contentType: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('application/x-www-form-urlencoded') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      null,
      'application/x-www-form-urlencoded; charset=UTF-8',
      'application/x-www-form-urlencoded; charset=iso-8859-1',
      'APPLICATION/X-WWW-FORM-URLENCODED',
      'application/x-www-form-urlencoded;;;',
      'application/x-www-form-urlencodedx',
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'text/plain',
      'text/html',
      'multipart/form-data; boundary=XyZ',
      'multipart/form-data',
      'application/xml',
      'application/octet-stream',
      '*/*',
      'application/*',
      '',
      ';',
      'x',
      'application/x-www-form-urlencoded, application/json',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 30 }) },
);

export function bodyFor(kind: BodyKind, pairs: readonly Pair[], s: Serialization, bytes: string): string | undefined {
  switch (kind) {
    case 'form':
      return serialize(pairs, s);
    case 'json':
      return JSON.stringify(Object.fromEntries(pairs));
    case 'json-array':
      return JSON.stringify(Object.fromEntries(pairs.map(([k, v]) => [k, [v, v]])));
    case 'json-scalar':
      return JSON.stringify(pairs[0]?.[1] ?? null);
    case 'json-broken':
      return `{"${pairs[0]?.[0] ?? 'a'}":`;
    case 'text':
      return pairs.map(([k, v]) => `${k}: ${v}`).join('\n');
    case 'multipart':
      return `--XyZ\r\n${pairs.map(([k, v]) => `Content-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n--XyZ`).join('\r\n')}--\r\n`;
    case 'bytes':
      return bytes;
    case 'empty':
      return '';
    case 'huge':
      return `${serialize(pairs, s)}&pad=${'x'.repeat(70_000)}`;
    case 'json-deep':
      return `${'['.repeat(10_000)}${JSON.stringify(Object.fromEntries(pairs))}${']'.repeat(10_000)}`;
    case 'many-params':
      // Just under the 64 KiB body limit: thousands of parameters after the real ones.
      return `${serialize(pairs, s)}&${Array.from({ length: 5000 }, (_, i) => `p${i}=${i}`).join('&')}`;
  }
}

export const bodyKind: fc.Arbitrary<BodyKind> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('form' as const) },
  { weight: 4, arbitrary: fc.constantFrom<BodyKind>('json', 'json-array', 'json-scalar', 'json-broken', 'json-deep', 'text', 'multipart', 'bytes', 'empty', 'huge', 'many-params') },
);

export const rawBytes: fc.Arbitrary<string> = fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ unit: 'binary-ascii', maxLength: 60 }));

// ---------------------------------------------------------------------------------------------------
// Authorization headers (client credentials and bearer tokens)

export type AuthSpec =
  | { kind: 'none' }
  | { kind: 'basic-right'; client: string }
  | { kind: 'basic-wrong'; client: string; secret: string }
  | { kind: 'basic-raw'; decoded: string }
  | { kind: 'basic-encoded-raw'; b64: string }
  | { kind: 'raw'; value: string };

/** Latin-1 printable only: what an HTTP parser lets through to the application. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcXYZ019 !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~\t'.split('')), maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
  fc.constantFrom('Basic', 'Basic ', 'Basic  ', 'basic Og==', 'BASIC Og==', 'Basic Og==', 'Basic ===', 'Basic !!!', 'Basic a', 'Basic YQ', 'Basic YTpi:', 'Basic\tYTpi', 'Bearer', 'Bearer ', 'Bearer a b', 'Bearer =', 'Digest x', 'Negotiate', 'Basic ' + 'A'.repeat(9000)),
);

const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v) ?? '').toString('base64url');
const DPOP_JWKS: unknown[] = [
  { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' },
  { kty: 'EC', crv: 'P-256', x: 'A', y: 'B' },
  { kty: 'EC', crv: 'P-384', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' },
  { kty: 'RSA', n: 'AQAB', e: 'AQAB' },
  { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' },
  { kty: 'oct', k: 'c2VjcmV0' },
  { kty: 'EC', crv: 'P-256', x: 'A', y: 'B', d: 'C' },
  'jwk',
  null,
  [],
];

/** RFC 9449 DPoP header values: junk, and JWS-shaped proofs with every header member wrong in turn (none can verify). */
export const dpopHeader: fc.Arbitrary<string> = fc.oneof(
  { weight: 1, arbitrary: headerValue },
  {
    weight: 3,
    arbitrary: fc
      .record({
        typ: fc.constantFrom('dpop+jwt', 'dpop+jwt', 'JWT', 'DPOP+JWT', undefined, 1),
        alg: fc.constantFrom('ES256', 'RS256', 'EdDSA', 'PS512', 'none', 'HS256', 'ES256K', '', undefined),
        jwk: fc.constantFrom(...DPOP_JWKS),
        claims: fc.record({ jti: fc.oneof(fc.uuid(), fc.constant(''), fc.integer()), htm: fc.constantFrom('POST', 'GET', 'post', 1), htu: fc.constantFrom('http://localhost:8080/auth/realms/test/protocol/openid-connect/token', 'http://localhost:8080/auth/realms/test/protocol/openid-connect/userinfo', 'not a url', ''), iat: fc.oneof(fc.integer(), fc.double(), fc.constant('now')), ath: fc.option(fc.base64String({ maxLength: 44 })) }, { requiredKeys: [] }),
        signature: fc.oneof(fc.base64String({ maxLength: 90 }).map((s) => s.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')), fc.constantFrom('', 'AAAA', '!!')),
      })
      .map(({ typ, alg, jwk, claims, signature }) => `${b64({ typ, alg, jwk })}.${b64(claims)}.${signature}`),
  },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 })).map(([a, b, c]) => `${b64(a)}.${b64(b)}.${c}`) },
);

export const authSpec: fc.Arbitrary<AuthSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('basic-right' as const), client: fc.constantFrom('web-app', 'rp', 'oob', 'post-app', 'native-app') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('basic-wrong' as const), client: clientId, secret: junk }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('basic-raw' as const),
      decoded: fc.oneof(fc.constantFrom('web-app', 'web-app:', ':', ':secret', 'web-app:%', 'web-app:%zz', '%:x', '%ZZ:%ZZ', 'web%2Dapp:x', 'web-app::', '\u0000:\u0000', 'a'.repeat(300) + ':x'), fc.tuple(junk, junk).map(([a, b]) => `${a}:${b}`), junk),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('basic-encoded-raw' as const), b64: fc.oneof(fc.base64String({ maxLength: 40 }), fc.string({ unit: fc.constantFrom(...'AZaz09+/=-_.~!'.split('')), maxLength: 30 })) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('raw' as const), value: headerValue }) },
);

// ---------------------------------------------------------------------------------------------------
// Tokens: symbolic references to decoys and forgeries, with mutations

export type TokenMutation =
  | { op: 'substitute'; at: number; ch: string }
  | { op: 'truncate'; n: number }
  | { op: 'append'; s: string }
  | { op: 'case' }
  | { op: 'dot'; at: number }
  | { op: 'segment-swap' }
  | { op: 'pad' };

export type TokenRef =
  | { ref: 'decoy'; client: string; kind: 'access' | 'refresh' | 'id'; mutation: TokenMutation | null }
  | { ref: 'forged'; name: string }
  | { ref: 'code'; client: string; fresh: boolean; mutation: TokenMutation | null }
  | { ref: 'device'; index: number; mutation: TokenMutation | null }
  | { ref: 'random'; value: string };

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export const tokenMutation: fc.Arbitrary<TokenMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('substitute' as const), at: fc.nat(), ch: fc.constantFrom(...B64URL.split('')) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('truncate' as const), n: fc.integer({ min: 1, max: 50 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('append' as const), s: fc.oneof(fc.constantFrom('A', 'AAAA', '.', '=', '==', '%00', '\u0000', 'é', '.x', '.' + 'A'.repeat(40)), junk.filter((s) => s.length > 0)) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'case' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dot' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'segment-swap' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'pad' as const }) },
);

/**
 * Applies a mutation. `changesMeaning` is false when the mutated token may still denote the same token
 * (spaces a parser may trim, base64url padding), so that the "never accepted" oracle only judges real
 * changes. The last character of a JWT segment is never substituted: its low bits may be unused by
 * base64url.
 */
export function mutateToken(token: string, m: TokenMutation): { value: string; changesMeaning: boolean } {
  switch (m.op) {
    case 'substitute': {
      if (token.length === 0) return { value: 'A', changesMeaning: true };
      const candidates = [...token].map((c, i) => i).filter((i) => B64URL.includes(token[i]!) && token[i + 1] !== '.' && i !== token.length - 1);
      if (candidates.length === 0) return { value: token + 'A', changesMeaning: true };
      const i = candidates[m.at % candidates.length]!;
      const ch = m.ch === token[i] ? B64URL[(B64URL.indexOf(m.ch) + 1) % B64URL.length]! : m.ch;
      return { value: token.slice(0, i) + ch + token.slice(i + 1), changesMeaning: true };
    }
    case 'truncate':
      return { value: token.slice(0, Math.max(0, token.length - m.n)), changesMeaning: true };
    case 'append':
      // Trailing spaces may be trimmed by the Bearer syntax, and base64url padding ('=') is commonly
      // tolerated by JWT libraries: neither changes the token.
      return { value: token + m.s, changesMeaning: m.s.trim() !== '' && !/^=+$/.test(m.s) };
    case 'case': {
      const v = token === token.toUpperCase() ? token.toLowerCase() : token.toUpperCase();
      return { value: v, changesMeaning: v !== token };
    }
    case 'dot': {
      const i = m.at % (token.length + 1);
      return { value: `${token.slice(0, i)}.${token.slice(i)}`, changesMeaning: true };
    }
    case 'segment-swap': {
      const parts = token.split('.');
      const v = parts.length > 1 ? [parts[1], parts[0], ...parts.slice(2)].join('.') : token.split('').reverse().join('');
      return { value: v, changesMeaning: v !== token };
    }
    case 'pad':
      return { value: ` ${token} `, changesMeaning: false };
  }
}

export const FORGED_NAMES = ['foreignKey', 'algNone', 'algNoneSigned', 'hsConfusion', 'widerScope', 'otherAzp', 'otherRealm', 'expired', 'idToken', 'emptySignature', 'twoParts', 'fourParts'];

const decoyClient = fc.constantFrom('web-app', 'native-app', 'rp', 'oob', 'post-app');

export const tokenRef: fc.Arbitrary<TokenRef> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ ref: fc.constant('decoy' as const), client: decoyClient, kind: fc.constantFrom('access' as const, 'refresh' as const, 'id' as const), mutation: fc.option(tokenMutation, { freq: 2 }) }) },
  { weight: 3, arbitrary: fc.record({ ref: fc.constant('forged' as const), name: fc.constantFrom(...FORGED_NAMES) }) },
  { weight: 2, arbitrary: fc.record({ ref: fc.constant('code' as const), client: decoyClient, fresh: fc.boolean(), mutation: fc.option(tokenMutation, { freq: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ ref: fc.constant('device' as const), index: fc.nat({ max: 3 }), mutation: fc.option(tokenMutation, { freq: 2 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      ref: fc.constant('random' as const),
      value: fc.oneof(fc.string({ unit: fc.constantFrom(...B64URL.split('')), minLength: 43, maxLength: 43 }), fc.stringMatching(/^ey[A-Za-z0-9_-]{10,40}\.ey[A-Za-z0-9_-]{10,60}\.[A-Za-z0-9_-]{0,50}$/), junk),
    }),
  },
);


/** tokenMutation, for arbitraries defined before it. */
function tokenMutationLate(): fc.Arbitrary<TokenMutation> {
  return fc.constant(null).chain(() => tokenMutation);
}
