import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { openDatabase } from '../../src/storage/database.js';
import { tokenHash } from '../../src/crypto/random.js';

const ISO = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z`;

// `realmgate client initial-access ...`: Keycloak's client initial access tokens (the admin API's
// clients-initial-access, test/admin/initial-access.test.ts) from the command line, on the installed command.
for (const dialect of dialects()) {
  describe(`realmgate client initial-access (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-initial-access-');
    const { ok, run, fails } = cliRunner(() => database.url);

    /** The stored rows of realm `realm`, by id. */
    async function rows(realm: string): Promise<Map<string, { token_hash: string; expires_at: number; created_at: number; count: number; remaining: number }>> {
      const db = await openDatabase(database.url);
      try {
        const list = await db.kysely.selectFrom('client_initial_access').select(['id', 'token_hash', 'created_at', 'expires_at', 'count', 'remaining']).where('realm_id', '=', realm).execute();
        return new Map(list.map((r) => [r.id, { token_hash: r.token_hash, created_at: Number(r.created_at), expires_at: Number(r.expires_at), count: Number(r.count), remaining: Number(r.remaining) }]));
      } finally {
        await db.close();
      }
    }

    test('the help texts name the commands and their options', () => {
      assert.match(ok(['client', '--help']), /^  initial-access /m);
      const help = ok(['client', 'initial-access', '--help']);
      assert.match(help, /^  create \[options\] <realm>/m);
      assert.match(help, /^  list <realm>/m);
      assert.match(help, /^  delete <realm> <id>/m);
      const create = ok(['client', 'initial-access', 'create', '--help']);
      assert.match(create, /--expiration <seconds>\s+seconds until it expires; 0 \(the default\): never/);
      assert.match(create, /--count <n>\s+how many clients it may register \(default 1\)/);
    });

    test('create prints the token once (only its hash is stored), list shows what may still register, delete removes', async () => {
      ok(['realm', 'create', 'shop']);
      assert.equal(ok(['client', 'initial-access', 'list', 'shop']), '');

      const plain = ok(['client', 'initial-access', 'create', 'shop']);
      const m1 = new RegExp(`^created initial access token ([0-9a-f-]{36}) in realm shop\nexpires: never\nregisters up to 1 client\ninitial access token \\(shown only now\\): ([A-Za-z0-9_-]{40,})\n$`).exec(plain);
      assert.ok(m1, plain);
      const [, id1, token1] = m1;

      const timed = ok(['client', 'initial-access', 'create', 'shop', '--expiration', '3600', '--count', '5']);
      const m2 = new RegExp(`^created initial access token ([0-9a-f-]{36}) in realm shop\nexpires: (${ISO})\nregisters up to 5 clients\ninitial access token \\(shown only now\\): ([A-Za-z0-9_-]{40,})\n$`).exec(timed);
      assert.ok(m2, timed);
      const [, id2, expires2, token2] = m2;

      const stored = await rows('shop');
      assert.equal(stored.get(id1!)!.token_hash, tokenHash(token1!));
      assert.equal(stored.get(id2!)!.token_hash, tokenHash(token2!));
      assert.deepEqual([stored.get(id1!)!.expires_at, stored.get(id1!)!.count], [0, 1]);
      const row2 = stored.get(id2!)!;
      assert.equal(row2.expires_at, row2.created_at + 3600);
      assert.equal(new Date(row2.expires_at * 1000).toISOString(), expires2);

      // id, created, expires (or never), count, remaining; never the token.
      const listed = ok(['client', 'initial-access', 'list', 'shop']);
      assert.doesNotMatch(listed, new RegExp(`${token1}|${token2}`));
      const lines = listed.trimEnd().split('\n').sort();
      assert.equal(lines.length, 2);
      const byId = new Map(lines.map((l) => [l.split('\t')[0], l]));
      assert.match(byId.get(id1!)!, new RegExp(`^${id1}\t${ISO}\tnever\t1\t1$`));
      assert.equal(byId.get(id2!), `${id2}\t${new Date(row2.created_at * 1000).toISOString()}\t${expires2}\t5\t5`);

      assert.equal(ok(['client', 'initial-access', 'delete', 'shop', id1!]), `deleted initial access token ${id1} from realm shop\n`);
      assert.equal(ok(['client', 'initial-access', 'list', 'shop']).split('\n')[0]!.split('\t')[0], id2);
      assert.equal((await rows('shop')).has(id1!), false);
      fails(['client', 'initial-access', 'delete', 'shop', id1!], /^realmgate: realm shop has no initial access token [0-9a-f-]{36}$/m);
    });

    test('an expired token is no longer listed', async () => {
      ok(['realm', 'create', 'brief']);
      // Long enough to be listed by the next command even on a loaded machine, short enough to wait for.
      const out = ok(['client', 'initial-access', 'create', 'brief', '--expiration', '4']);
      const id = /token ([0-9a-f-]{36}) in realm/.exec(out)![1]!;
      assert.match(ok(['client', 'initial-access', 'list', 'brief']), new RegExp(`^${id}\t`));
      const { expires_at } = (await rows('brief')).get(id)!;
      // The clock is read in whole seconds: gone once it is past expires_at.
      await new Promise((r) => setTimeout(r, Math.max(0, (expires_at + 1) * 1000 - Date.now() + 50)));
      assert.equal(ok(['client', 'initial-access', 'list', 'brief']), '');
    });

    test('refusals: bad numbers, an unknown realm or id; one line, non-zero exit, nothing made', async () => {
      ok(['realm', 'create', 'strict']);
      for (const [args, message] of [
        [['--count', '0'], /--count must be from 1 to 1000000/],
        [['--count', '1000001'], /--count must be from 1 to 1000000/],
        [['--count', '2.5'], /--count must be a whole number/],
        [['--count', 'many'], /--count must be a whole number/],
        [['--expiration', '-1'], /--expiration must be a whole number/],
        [['--expiration', '1h'], /--expiration must be a whole number/],
        [['--expiration', '315360001'], /--expiration must be from 0 to 315360000/],
        [['--expiration', '99999999999999999999'], /--expiration is too large/],
      ] as const) {
        fails(['client', 'initial-access', 'create', 'strict', ...args], message);
      }
      assert.equal((await rows('strict')).size, 0);
      fails(['client', 'initial-access', 'create', 'no-such-realm'], /realm no-such-realm does not exist/);
      fails(['client', 'initial-access', 'list', 'no-such-realm'], /realm no-such-realm does not exist/);
      fails(['client', 'initial-access', 'delete', 'strict', 'no-such-id'], /realm strict has no initial access token no-such-id/);
      fails(['client', 'initial-access', 'delete', 'strict'], /missing required argument 'id'/);
      // A control character in the id is shown escaped, on one line.
      const r = run(['client', 'initial-access', 'delete', 'strict', 'a\x1b[2Jb']);
      assert.notEqual(r.status, 0);
      assert.doesNotMatch(r.stderr, /\x1b/);
    });
  });
}
