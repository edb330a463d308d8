import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { Store } from '../../src/storage/store.js';
import { createClient, createOrganization, createRealm, createUser } from '../../src/admin/operations.js';
import { randomId, randomToken, tokenHash } from '../../src/crypto/random.js';

for (const dialect of dialects()) {
  describe(`token storage (${dialect})`, () => {
    let tdb: TestDatabase;
    let store: Store;
    let userId: string;
    let orgId: string;
    const now = 1_800_000_000;

    before(async () => {
      tdb = await createTestDatabase(dialect);
      store = new Store(tdb.db);
      await createRealm(store, { id: 'r' });
      orgId = (await createOrganization(store, { realmId: 'r', alias: 'o' })).id;
      userId = (await createUser(store, { realmId: 'r', username: 'u', password: 'password-u', orgAliases: ['o'] })).id;
      await createClient(store, { realmId: 'r', clientId: 'c', redirectUris: ['https://c.example/cb'] });
    });
    after(() => tdb.drop());

    async function newCode(): Promise<string> {
      const hash = tokenHash(randomToken());
      await store.codes.create({
        hash,
        realmId: 'r',
        clientId: 'c',
        redirectUri: 'https://c.example/cb',
        userId,
        sessionId: randomId(),
        organizationId: orgId,
        scopes: ['openid'],
        codeChallenge: null,
        codeChallengeMethod: null,
        nonce: null,
        authTime: now,
        createdAt: now,
        expiresAt: now + 45,
      });
      return hash;
    }

    const OFF = { seconds: 0, max: 1 };
    const presented = (first: unknown, generation = 1) => {
      const f = first as { token: { hash: string }; chain: { id: string } };
      return { hash: f.token.hash, chainId: f.chain.id, generation, issuedAt: now, expiresAt: now + 100 };
    };
    const accept = () => ({ chain: { id: randomId(), maxExpiresAt: now + 1000 }, token: { hash: tokenHash(randomToken()), expiresAt: now + 100 } });

    test('concurrent redemptions of one code: exactly one wins', async () => {
      const hash = await newCode();
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => store.codes.redeem(hash, now, accept)));
      const issued = outcomes.filter((o) => o.status === 'issued');
      assert.equal(issued.length, 1);
      // Every loser saw a used code; the chain of the winner was revoked by the reuse.
      assert.ok(outcomes.every((o) => o.status === 'issued' || o.status === 'reused'));
      const chain = await store.refresh.getChain((issued[0] as { chain: { id: string } }).chain.id);
      assert.notEqual(chain?.revokedAt, null);
    });

    test('a rejected redemption still consumes the code and creates nothing', async () => {
      const hash = await newCode();
      const r = await store.codes.redeem(hash, now, () => ({ reject: 'nope' }));
      assert.equal(r.status, 'rejected');
      assert.equal((await store.codes.redeem(hash, now, accept)).status, 'reused');
    });

    test('concurrent rotations of one refresh token: at most one succeeds and the chain is revoked', async () => {
      const hash = await newCode();
      const first = await store.codes.redeem(hash, now, accept);
      assert.equal(first.status, 'issued');
      const rt = presented(first);
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => store.refresh.rotate(rt, now + 1, OFF, () => ({ next: { hash: tokenHash(randomToken()), expiresAt: now + 200 } }))),
      );
      assert.equal(outcomes.filter((o) => o.status === 'rotated').length, 1);
      assert.equal(outcomes.filter((o) => o.status === 'reused').length, 7);
      const chain = await store.refresh.getChain((first as { chain: { id: string } }).chain.id);
      assert.notEqual(chain?.revokedAt, null);
    });

    test('a rejected rotation changes nothing', async () => {
      const first = await store.codes.redeem(await newCode(), now, accept);
      const rt = presented(first);
      assert.equal((await store.refresh.rotate(rt, now, OFF, () => ({ reject: 'x' }))).status, 'rejected');
      assert.equal((await store.refresh.rotate(rt, now, OFF, () => ({ next: { hash: tokenHash(randomToken()), expiresAt: now + 5 } }))).status, 'rotated');
    });

    test('a rotation writes no token row: the chain row holds the current hash and generation', async () => {
      const first = await store.codes.redeem(await newCode(), now, accept);
      const chainId = (first as { chain: { id: string } }).chain.id;
      const tokensBefore = await tdb.db.kysely.selectFrom('refresh_tokens').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      let rt = presented(first);
      for (let gen = 2; gen <= 4; gen++) {
        const next = { hash: tokenHash(randomToken()), expiresAt: now + 100 };
        const r = await store.refresh.rotate(rt, now + gen, OFF, (_t, _c, _s, generation) => {
          assert.equal(generation, gen);
          return { next };
        });
        assert.equal(r.status, 'rotated');
        rt = { ...rt, hash: next.hash, generation: gen };
        const row = await tdb.db.kysely.selectFrom('refresh_chains').select(['current_hash', 'generation', 'rotated_at']).where('id', '=', chainId).executeTakeFirstOrThrow();
        assert.deepEqual({ ...row, rotated_at: Number(row.rotated_at) }, { current_hash: next.hash, generation: gen, rotated_at: now + gen });
      }
      const tokensAfter = await tdb.db.kysely.selectFrom('refresh_tokens').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(tokensAfter.n), Number(tokensBefore.n));
    });

    test('a foreseen rotation of the current token runs as one statement where the database can, with the same outcome as the full path', async () => {
      const first = (await store.codes.redeem(await newCode(), now, accept)) as { status: string; chain: { id: string; sessionId: string; scopes: string[]; maxExpiresAt: number } };
      const chainId = first.chain.id;
      const expect = { realmId: 'r', clientId: 'c', userId, sessionId: first.chain.sessionId, scopes: first.chain.scopes, notBefore: 0 };
      let decided = 0;
      const decide = () => {
        decided++;
        return { next: { hash: tokenHash(randomToken()), expiresAt: now + 100 } };
      };
      const oneStatement = store.refresh.rotatesInOneStatement;
      assert.equal(oneStatement, dialect === 'postgres');
      let rt = presented(first);
      const next = { hash: tokenHash(randomToken()), expiresAt: now + 100 };
      const r = await store.refresh.rotate(rt, now + 1, OFF, decide, undefined, { expect, next });
      assert.equal(r.status, 'rotated');
      const row = await tdb.db.kysely.selectFrom('refresh_chains').select(['current_hash', 'generation', 'grace_from_gen']).where('id', '=', chainId).executeTakeFirstOrThrow();
      if (oneStatement) {
        assert.equal(decided, 0, 'the full path did not run');
        assert.equal((r as { token: unknown }).token, next);
        assert.deepEqual(row, { current_hash: next.hash, generation: 2, grace_from_gen: 1 });
        assert.equal((r as { subject: { username: string } }).subject.username, 'u');
        assert.equal((r as { chain: { id: string } }).chain.id, chainId);
      } else {
        assert.equal(decided, 1);
        assert.equal(row.generation, 2);
      }
      rt = { ...rt, hash: row.current_hash!, generation: 2 };

      // Whatever the claims do not match exactly goes the full way (which explains itself): another session,
      // a chain that ends before the new token would, a realm not-before after the chain's start.
      for (const [what, foreseen] of [
        ['another session', { expect: { ...expect, sessionId: 'other' }, next: { hash: tokenHash(randomToken()), expiresAt: now + 100 } }],
        ['the chain ends first', { expect, next: { hash: tokenHash(randomToken()), expiresAt: now + 5000 } }],
        ['not-before', { expect: { ...expect, notBefore: now + 10 }, next: { hash: tokenHash(randomToken()), expiresAt: now + 100 } }],
      ] as const) {
        const decidedBefore: number = decided;
        const out = await store.refresh.rotate(rt, now + 2, OFF, decide, undefined, foreseen);
        assert.equal(out.status, 'rotated', what);
        assert.equal(decided, decidedBefore + 1, `${what}: the full path decided`);
        assert.notEqual((out as { token: unknown }).token, foreseen.next, what);
        const cur = await tdb.db.kysely.selectFrom('refresh_chains').select(['current_hash', 'generation']).where('id', '=', chainId).executeTakeFirstOrThrow();
        rt = { ...rt, hash: cur.current_hash!, generation: cur.generation };
      }

      // Concurrent foreseen rotations of one token: exactly one wins, the others are reuses.
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => store.refresh.rotate(rt, now + 3, OFF, decide, undefined, { expect, next: { hash: tokenHash(randomToken()), expiresAt: now + 100 } })),
      );
      assert.equal(outcomes.filter((o) => o.status === 'rotated').length, 1);
      assert.equal(outcomes.filter((o) => o.status === 'reused').length, 7);
    });

    test('unknown hashes are not_found', async () => {
      assert.equal((await store.codes.redeem('nope', now, accept)).status, 'not_found');
      assert.equal((await store.refresh.rotate({ hash: 'nope', chainId: 'nope', generation: 1, issuedAt: now, expiresAt: now + 1 }, now, OFF, () => ({ reject: 'x' }))).status, 'not_found');
    });
  });
}
