import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { dialects } from '../helpers/db.js';
import { startTestServer, basic, REALM, type TestServer } from '../helpers/server.js';
import { CookieJar, authorizeQuery, inject, pageKind, parseForm } from '../helpers/flow.js';
import { createClient } from '../../src/admin/operations.js';
import { AUTH, Harness, assertTokenError } from './helpers.js';

for (const dialect of dialects()) {
  describe(`RFC 6819 threat model countermeasures (${dialect})`, () => {
    let ts: TestServer;
    let h: Harness;
    before(async () => {
      ts = await startTestServer({ dialect });
      h = new Harness(ts);
    });
    after(() => ts.close());

    const sha256 = (v: string): string => crypto.createHash('sha256').update(v).digest('base64url');

    test('RFC 6819 4.4.1.2 / 4.5.2 / 5.1.4.1.3: the database holds only hashes, and a hash read from it redeems nothing', async () => {
      const code = await h.code();
      const codeRow = await ts.store.db.kysely.selectFrom('authorization_codes').select('hash').where('hash', '=', sha256(code)).executeTakeFirst();
      assert.ok(codeRow, 'the code is not stored as its SHA-256');
      assertTokenError(await h.exchange(codeRow.hash), 400, 'invalid_grant');
      const t = await h.tokens();
      // Storage is per chain: the chain's row holds its current token's hash.
      const tokenRow = await ts.store.db.kysely.selectFrom('refresh_chains').select('current_hash').where('current_hash', '=', sha256(t.refresh_token)).executeTakeFirst();
      assert.ok(tokenRow?.current_hash, 'the refresh token is not stored as its SHA-256');
      assertTokenError(await h.refresh(tokenRow.current_hash), 400, 'invalid_grant');
      // The real values still work: the attempts with the hashes changed nothing.
      assert.equal((await h.exchange(code)).statusCode, 200);
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
    });

    test('RFC 6819 4.4.1.3 / 4.5.3 / 5.1.4.2.2: guessing codes and refresh tokens fails without disturbing the real ones', async () => {
      const code = await h.code();
      const t = await h.tokens();
      for (let i = 0; i < 20; i++) {
        const guess = crypto.randomBytes(32).toString('base64url');
        assertTokenError(await h.exchange(guess), 400, 'invalid_grant');
        assertTokenError(await h.refresh(guess), 400, 'invalid_grant');
      }
      // Near misses of the real values are no better.
      assertTokenError(await h.exchange(code.slice(0, -1)), 400, 'invalid_grant');
      assertTokenError(await h.refresh(t.refresh_token + 'x'), 400, 'invalid_grant');
      assert.equal((await h.exchange(code)).statusCode, 200);
      assert.equal((await h.refresh(t.refresh_token)).statusCode, 200);
    });

    test('RFC 6819 4.3.4 / 4.3.5 / 5.1.4.2.2: generated client secrets are high-entropy and stored hashed', async () => {
      const { secret, generated } = await createClient(ts.store, { realmId: REALM, clientId: 'generated', redirectUris: [ts.client.redirectUri] });
      assert.ok(generated && secret);
      assert.match(secret, /^[A-Za-z0-9_-]{43,}$/);
      const row = await ts.store.db.kysely.selectFrom('clients').select('secret_hash').where('client_id', '=', 'generated').executeTakeFirstOrThrow();
      assert.ok(row.secret_hash && !row.secret_hash.includes(secret));
      assertTokenError(await h.refresh('x', {}, basic('generated', secret)), 400, 'invalid_grant');
    });

    test('RFC 6819 4.4.1.4 / 4.4.1.13 / 5.2.4.4: a code cannot be redeemed by, or injected into, another client', async () => {
      await createClient(ts.store, { realmId: REALM, clientId: 'attacker', redirectUris: [ts.client.redirectUri], secret: 'attacker-secret' });
      // The attacker client redeems a code of the victim client with its own credentials.
      assertTokenError(await h.exchange(await h.code(), {}, basic('attacker', 'attacker-secret')), 400, 'invalid_grant');
      // The attacker injects a code obtained for its own client into the victim client's exchange.
      assertTokenError(await h.exchange(await h.code({ client_id: 'attacker' })), 400, 'invalid_grant');
    });

    test('RFC 6819 5.2.1.1 / 5.2.2.4: revoking any refresh token of a grant, even a used one, ends the whole grant', async () => {
      const t = await h.tokens();
      const next = (await h.refresh(t.refresh_token)).json();
      const res = await ts.app.inject({
        method: 'POST',
        url: `/auth/realms/${REALM}/protocol/openid-connect/revoke`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: h.auth },
        payload: new URLSearchParams({ token: t.refresh_token }).toString(),
      });
      assert.equal(res.statusCode, 200);
      assertTokenError(await h.refresh(next.refresh_token), 400, 'invalid_grant');
      assert.equal(await h.active(next.access_token), false);
    });

    test('RFC 6819 4.2.2 / 5.2.4.2: the user sees, in plain words, every scope the client asks for before approving', async () => {
      const jar = new CookieJar();
      let res = await inject(ts.app, jar, 'GET', `${AUTH}?${authorizeQuery(ts, { scope: 'openid email exports' })}`);
      let page = await inject(ts.app, jar, 'GET', String(res.headers.location));
      const form = parseForm(page.body);
      res = await inject(ts.app, jar, 'POST', form.action, { csrf: form.csrf, username: ts.user.username, password: ts.user.password });
      page = await inject(ts.app, jar, 'GET', String(res.headers.location));
      assert.equal(pageKind(page.body), 'consent');
      const texts = (await ts.store.realms.scopes(REALM)).filter((s) => ['openid', 'email', 'exports'].includes(s.name)).map((s) => s.consentText);
      assert.equal(texts.length, 3);
      const unescape = (s: string): string => s.replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/&quot;/g, '"');
      for (const text of texts) assert.ok(unescape(page.body).includes(text), text);
      assert.match(page.body, /Web App/);
    });
  });
}
