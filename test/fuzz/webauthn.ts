/**
 * Fuzzing of the security key forms (WebAuthn, the sign-in step and webauthn-register): a valid
 * response of a software authenticator, then mutated (a field replaced by junk or dropped, bytes of the
 * authenticator data, signature or attestation flipped, truncated or extended, members of clientDataJSON
 * replaced, another key's response). Every response is checked by harness.ts (never a 5xx); and a
 * mutated response never signs in or registers a key unless the mutation left it exactly as it was.
 */
import { describe, test, before, after } from 'node:test';
import fc from 'fast-check';
import { CookieJar, pageKind } from '../helpers/flow.js';
import { createUser } from '../../src/admin/operations.js';
import { SoftKey, assertWith, attest, pageOptions, registerTestKey } from '../helpers/webauthn.js';
import { junk } from './arbitraries.js';
import { FUZZ_PASSWORD } from './constants.js';
import { assertGenuineTokensSurvive, fuzz, realmPath, reportStats, runs, startFuzzServer, type FuzzServer, type GenuineToken, type Io } from './harness.js';

const ORIGIN = 'http://localhost:8080';
const RP_ID = 'localhost';

type Mutation =
  | { kind: 'none' }
  | { kind: 'replace'; field: number; value: string }
  | { kind: 'drop'; field: number }
  | { kind: 'flip'; field: number; at: number; xor: number }
  | { kind: 'truncate'; field: number; keep: number }
  | { kind: 'append'; field: number; bytes: Uint8Array }
  | { kind: 'client-data'; member: 'type' | 'origin' | 'challenge' | 'crossOrigin' | 'tokenBinding'; value: unknown }
  | { kind: 'other-key' };

const jsonValue = fc.oneof(junk, fc.integer(), fc.boolean(), fc.constant(null), fc.constantFrom('webauthn.get', 'webauthn.create', ORIGIN, 'http://localhost', 'https://localhost:8080', { status: 'present', id: 'x' }), fc.array(junk, { maxLength: 2 }));

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'none' }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('replace' as const), field: fc.nat(), value: fc.oneof(junk, fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b).toString('base64url'))) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), field: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('flip' as const), field: fc.nat(), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), field: fc.nat(), keep: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('append' as const), field: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('client-data' as const), member: fc.constantFrom('type' as const, 'origin' as const, 'challenge' as const, 'crossOrigin' as const, 'tokenBinding' as const), value: jsonValue }) },
  { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'other-key' }) },
);

/** Applies a mutation to a form's base64url fields (the CSRF token is not among them). */
function mutate(fields: Record<string, string>, m: Mutation, other: () => Record<string, string>): Record<string, string> {
  const names = Object.keys(fields);
  const out = { ...fields };
  const name = (i: number): string => names[i % names.length]!;
  const bytes = (n: string): Buffer => Buffer.from(out[n] ?? '', 'base64url');
  switch (m.kind) {
    case 'none':
      return out;
    case 'replace':
      out[name(m.field)] = m.value;
      return out;
    case 'drop':
      delete out[name(m.field)];
      return out;
    case 'flip': {
      const n = name(m.field);
      const b = bytes(n);
      if (b.length > 0) b[m.at % b.length]! ^= m.xor;
      out[n] = b.toString('base64url');
      return out;
    }
    case 'truncate': {
      const n = name(m.field);
      const b = bytes(n);
      out[n] = b.subarray(0, b.length === 0 ? 0 : m.keep % b.length).toString('base64url');
      return out;
    }
    case 'append': {
      const n = name(m.field);
      out[n] = Buffer.concat([bytes(n), Buffer.from(m.bytes)]).toString('base64url');
      return out;
    }
    case 'client-data': {
      const c = JSON.parse(bytes('client_data_json').toString()) as Record<string, unknown>;
      c[m.member] = m.value;
      out.client_data_json = Buffer.from(JSON.stringify(c)).toString('base64url');
      return out;
    }
    case 'other-key':
      return other();
  }
}

const withoutMember = (f: Record<string, string>, name: string): Record<string, string> => Object.fromEntries(Object.entries(f).filter(([k]) => k !== name));
/** Whether two clientDataJSON (base64url) say the same type, challenge and origin, and neither is cross-origin nor token-bound. */
function sameClientData(a: string | undefined, b: string | undefined): boolean {
  const read = (v: string | undefined): Record<string, unknown> | undefined => {
    try {
      const j = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(v ?? '', 'base64url'))) as unknown;
      return j && typeof j === 'object' ? (j as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const x = read(a);
  const y = read(b);
  if (!x || !y || !/^[A-Za-z0-9_-]+$/.test(a ?? '')) return false;
  const tb = x.tokenBinding as { status?: unknown } | undefined;
  return x.type === y.type && x.challenge === y.challenge && x.origin === y.origin && x.crossOrigin !== true && !(tb && typeof tb === 'object' && tb.status === 'present');
}

/**
 * The format an attestation object (base64url, as the helper's encoder writes it: a map of three, fmt
 * first) names, when it is a text string of valid UTF-8; read here by hand, not with the server's decoder.
 */
function formatOf(v: string | undefined): string | undefined {
  const buf = Buffer.from(v ?? '', 'base64url');
  if (buf[0] !== 0xa3 || !buf.subarray(1, 5).equals(Buffer.from([0x63, 0x66, 0x6d, 0x74]))) return undefined;
  // A text string (major type 3) of up to 23 bytes, its length in the head, or of up to 255 after it.
  const head = buf[5] ?? 0;
  const [start, length] = head >= 0x60 && head <= 0x77 ? [6, head - 0x60] : head === 0x78 ? [7, buf[6] ?? 0] : [0, -1];
  if (length < 0 || buf.length < start + length) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(start, start + length));
  } catch {
    return undefined;
  }
}

/** The authenticator data an attestation object (base64url, as the helper's encoder writes it: authData last) ends with. */
function authDataOf(v: string | undefined): Buffer | undefined {
  if (!v || !/^[A-Za-z0-9_-]+$/.test(v)) return undefined;
  const buf = Buffer.from(v, 'base64url');
  const at = buf.lastIndexOf(Buffer.from('hauthData'));
  const head = at < 0 ? undefined : buf[at + 9];
  if (head === 0x58) return buf.length === at + 11 + buf[at + 10]! ? buf.subarray(at + 11) : undefined;
  if (head === 0x59) return buf.length === at + 12 + buf.readUInt16BE(at + 10) ? buf.subarray(at + 12) : undefined;
  return undefined;
}

/**
 * Whether the authenticator data of `sent` differs from that of `valid` only where nothing checks it at
 * a registration whose attestation is taken as none (then nothing signs the authenticator data, WebAuthn
 * 8.7): the signature counter and the AAGUID (they describe the authenticator, and this realm sets no
 * AAGUID list), the credential id (the authenticator's to choose), and the flags other than UP, AT and ED
 * (this realm's policy does not require UV; BE, BS and the reserved bits are not read). The rpIdHash, the
 * id's length and the public key must be the same. Read here by hand, not with the server's parser.
 */
function unsignedChangesOnly(sent: string | undefined, valid: string | undefined): boolean {
  const a = authDataOf(sent);
  const b = authDataOf(valid);
  if (!a || !b || a.length !== b.length || b.length < 55) return false;
  const idEnd = 55 + b.readUInt16BE(53);
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (i === 32 && ((a[i]! ^ b[i]!) & (0x01 | 0x40 | 0x80)) === 0) continue;
    if ((i >= 33 && i < 53) || (i >= 55 && i < idEnd)) continue;
    return false;
  }
  return true;
}

const same = (a: Record<string, string>, b: Record<string, string>): boolean => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

export function webauthnFuzzSuite(dialect: 'sqlite' | 'postgres'): void {
  describe(`fuzz: security key forms (${dialect})`, () => {
    let fs: FuzzServer;
    let genuine: GenuineToken[];
    const key = new SoftKey();
    let keyedId = '';
    let enrolId = '';
    let signIns = 0;
    const passkey = new SoftKey();
    let passkeyUserId = '';
    before(async () => {
      ({ fs, genuine } = await startFuzzServer(dialect));
      keyedId = (await createUser(fs.ts.store, { realmId: 'test', username: 'keyed', password: FUZZ_PASSWORD, orgAliases: ['acme'] })).id;
      await registerTestKey(fs.ts.store, fs.ts.config.authUrl, keyedId, key, 'fuzz key');
      enrolId = (await createUser(fs.ts.store, { realmId: 'test', username: 'enrol', password: FUZZ_PASSWORD, orgAliases: ['acme'], requiredActions: ['webauthn-register'] })).id;
      passkeyUserId = (await createUser(fs.ts.store, { realmId: 'test', username: 'passkey', password: FUZZ_PASSWORD, orgAliases: ['acme'] })).id;
      await registerTestKey(fs.ts.store, fs.ts.config.authUrl, passkeyUserId, passkey, 'fuzz passkey', { passwordless: true });
    });
    after(() => fs.ts.close());

    /** A new sign-in of `username` up to the page after the password. */
    async function signIn(io: Io, username: string): Promise<{ jar: CookieJar; html: string; action: string; csrf: string }> {
      const jar = new CookieJar();
      // An address of its own for each sign-in: unfinished sign-ins are capped per address, and shrinking repeats one.
      const n = ++signIns;
      const remoteAddress = `10.77.${(n >> 8) & 255}.${n & 255}`;
      const send = async (method: 'GET' | 'POST', url: string, form?: Record<string, string>) => {
        const res = await io.send({ method, url, remoteAddress, headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }, ...(form ? { payload: new URLSearchParams(form).toString() } : {}) });
        jar.update(res);
        return res;
      };
      const q = new URLSearchParams({ client_id: fs.ts.client.id, redirect_uri: fs.ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's' });
      const start = await send('GET', `${realmPath('/protocol/openid-connect/auth')}?${q}`);
      const login = await send('GET', start.headers.location as string);
      const action = /<form method="post" action="([^"]*)"/.exec(login.body)![1]!.replace(/&amp;/g, '&');
      const csrf = /name="csrf" value="([^"]*)"/.exec(login.body)![1]!;
      const after = await send('POST', action, { csrf, username, password: FUZZ_PASSWORD });
      const page = await send('GET', after.headers.location as string);
      const stepAction = /<form method="post" action="([^"]*)"/.exec(page.body)![1]!.replace(/&amp;/g, '&');
      return { jar, html: page.body, action: stepAction, csrf };
    }

    test('sign-in with a key: mutated assertions never 5xx, never sign in unless unchanged', async (t) => {
      await fuzz(t, fs, 'webauthn-get', fc.record({ m: mutation, csrf: fc.boolean() }), async (s, io) => {
        await fs.ts.store.loginFailures.clear('test', `otp:${keyedId}`);
        const p = await signIn(io, 'keyed');
        if (pageKind(p.html) !== 'webauthn') io.fail(`expected the security key page, got ${pageKind(p.html)}`, { method: 'GET', url: '', headers: {}, remoteAddress: io.address }, { statusCode: 0, body: p.html } as never);
        const challenge = pageOptions(p.html).challenge;
        const valid = assertWith(key, { challenge, origin: ORIGIN, rpId: RP_ID, userHandle: keyedId });
        const sent = mutate(valid, s.m, () => assertWith(new SoftKey(), { challenge, origin: ORIGIN, rpId: RP_ID }));
        const form = { ...(s.csrf ? { csrf: p.csrf } : {}), ...sent };
        const req = { method: 'POST' as const, url: p.action, headers: { cookie: p.jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() };
        const res = await io.send(req);
        const signedIn = res.statusCode === 303 || (res.headers['set-cookie'] ?? '').toString().includes('RG_SESSION=');
        // userHandle is optional (WebAuthn 7.2 step 6: checked when the authenticator gives one): an empty or dropped one is the same response.
        if (signedIn && !(s.csrf && same(withoutMember(sent, 'user_handle'), withoutMember(valid, 'user_handle')) && (sent.user_handle ?? '') in { '': 1, [valid.user_handle!]: 1 })) io.fail('a mutated security key response signed in', { ...req, remoteAddress: io.address }, res);
        // The key's counter moved only for an unchanged response; the next valid one counts from the stored value.
        if (!signedIn) key.signCount = (await fs.ts.store.webauthn.list(keyedId))[0]!.signCount;
      }, runs(120));
    });

    test('webauthn-register: mutated attestations never 5xx, never register a key unless unchanged', async (t) => {
      await fuzz(t, fs, 'webauthn-create', fc.record({ m: mutation, alg: fc.constantFrom('ES256' as const, 'ES256' as const, 'RS256' as const, 'EdDSA' as const), fmt: fc.constantFrom('none' as const, 'packed' as const, 'fido-u2f' as const) }), async (s, io) => {
        // Each run starts from a user who must register a key and has none (a failed run, shrunk, leaves one).
        for (const k of await fs.ts.store.webauthn.list(enrolId)) await fs.ts.store.webauthn.delete(enrolId, k.id);
        await fs.ts.store.users.update(enrolId, { requiredActions: ['webauthn-register'] });
        const p = await signIn(io, 'enrol');
        const challenge = pageOptions(p.html).challenge;
        const fresh = new SoftKey(s.alg);
        const valid = attest(fresh, { challenge, origin: ORIGIN, rpId: RP_ID, fmt: s.fmt });
        const sent = mutate(valid, s.m, () => attest(new SoftKey(), { challenge, origin: 'https://evil.example', rpId: RP_ID }));
        const req = { method: 'POST' as const, url: p.action, headers: { cookie: p.jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf: p.csrf, ...sent }).toString() };
        const res = await io.send(req);
        const keys = await fs.ts.store.webauthn.list(enrolId);
        // Only ES256 is in the realm's policy: an unchanged ES256 response registers, nothing else does.
        // The transports are the browser's word, not signed: another value changes nothing that is checked.
        // Nothing signs clientDataJSON at a registration with attestation none (WebAuthn 7.1: its challenge,
        // type and origin are what count): a change elsewhere in it (an unknown member) may register.
        // A format other than packed (fido-u2f, or a name the mutation made) is not verified (the policy asks
        // no attestation): taken as none, its statement ignored. Then nothing signs the authenticator data,
        // and a change to what nothing checks in it may register.
        const fmt = formatOf(sent.attestation_object);
        const sameObject = sent.attestation_object === valid.attestation_object || (fmt !== undefined && fmt !== 'packed' && unsignedChangesOnly(sent.attestation_object, valid.attestation_object));
        const allowed = sameObject && sameClientData(sent.client_data_json, valid.client_data_json) && s.alg === 'ES256';
        if (keys.length > 0 && !allowed) io.fail('a mutated attestation registered a key', { ...req, remoteAddress: io.address }, res);
      }, runs(120));
    });

    test("passkeys at the login page (an application's sign-in, the account page's): mutated assertions never 5xx, never sign in unless unchanged", async (t) => {
      const arb = fc.record({ m: mutation, handle: fc.constantFrom('own', 'own', 'own', 'keyed', 'none'), page: fc.constantFrom('application', 'application', 'account') });
      // A userHandle of one zero byte: PostgreSQL refused the lookup, a 500 (FUZZ_SEED=4242, 2026-11-29).
      const zeroByte = { m: { kind: 'replace', field: 2130706414, value: 'AA' }, handle: 'own' } as const;
      const examples = [{ ...zeroByte, page: 'application' as const }, { ...zeroByte, page: 'account' as const }];
      await fuzz(
        t,
        fs,
        'webauthn-passkey',
        arb,
        async (s, io) => {
          await fs.ts.store.loginFailures.clear('test', `otp:${passkeyUserId}`);
          const jar = new CookieJar();
          const n = ++signIns;
          const remoteAddress = `10.78.${(n >> 8) & 255}.${n & 255}`;
          let pageUrl = realmPath('/account');
          let action = realmPath('/account/passwordless');
          if (s.page === 'application') {
            const q = new URLSearchParams({ client_id: fs.ts.client.id, redirect_uri: fs.ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's' });
            const start = await io.send({ method: 'GET', url: `${realmPath('/protocol/openid-connect/auth')}?${q}`, remoteAddress });
            jar.update(start);
            pageUrl = start.headers.location as string;
            action = `${pageUrl}/passwordless`;
          }
          const login = await io.send({ method: 'GET', url: pageUrl, remoteAddress, headers: { cookie: jar.header() } });
          jar.update(login);
          const csrf = /name="csrf" value="([^"]*)"/.exec(login.body)![1]!;
          const challenge = pageOptions(login.body).challenge;
          const userHandle = s.handle === 'own' ? passkeyUserId : s.handle === 'keyed' ? keyedId : undefined;
          const valid = assertWith(passkey, { challenge, origin: ORIGIN, rpId: RP_ID, ...(userHandle !== undefined ? { userHandle } : {}) });
          const sent = mutate(valid, s.m, () => assertWith(new SoftKey(), { challenge, origin: ORIGIN, rpId: RP_ID, userHandle: passkeyUserId }));
          const req = { method: 'POST' as const, url: action, remoteAddress, headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ csrf, ...sent }).toString() };
          const res = await io.send(req);
          const signedIn = res.statusCode === 303 || (res.headers['set-cookie'] ?? '').toString().includes('RG_SESSION=');
          // Only an unchanged response naming its own user signs in (a passkey must return its userHandle).
          if (signedIn && !(s.handle === 'own' && same(sent, valid))) io.fail('a mutated passkey response signed in', req, res);
          if (!signedIn) passkey.signCount = (await fs.ts.store.webauthn.list(passkeyUserId))[0]!.signCount;
        },
        runs(120),
        examples,
      );
    });

    test('tokens issued before the fuzzing still work', async (t) => {
      await assertGenuineTokensSurvive(fs, genuine);
      reportStats(t, fs);
    });
  });
}
