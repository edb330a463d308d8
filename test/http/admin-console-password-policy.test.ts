// The admin console's password policy: set on the realm page (refused with the reason, kept otherwise),
// then enforced by the user page's password reset, on both databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, setup, signIn } from '../helpers/console.js';
import { verifyPassword } from '../../src/crypto/passwords.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: the realm's password policy set on the realm page, then enforced by the user page's password reset`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const realmUrl = `${CONSOLE}/realms/${REALM}`;
      const page = await inject(ts.app, jar, 'GET', realmUrl);
      assert.match(page.body, /<h2>Password policy<\/h2>\s*<p class="muted" id="policy-now">At least 8 characters\.<\/p>/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      let res = await inject(ts.app, jar, 'POST', `${realmUrl}/password-policy`, { csrf, passwordPolicy: 'length(12) and hashAlgorithm(pbkdf2-sha512)' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"[^>]*>[^<]*hashAlgorithm: not supported/);
      assert.match(res.body, /value="length\(12\) and hashAlgorithm\(pbkdf2-sha512\)"/, 'the form keeps what was typed');
      assert.equal((await ts.store.realms.get(REALM))?.passwordPolicy, '');
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/password-policy`, { csrf, passwordPolicy: 'length(12) and specialChars' });
      assert.equal(res.statusCode, 303);
      assert.equal((await ts.store.realms.get(REALM))?.passwordPolicy, 'length(12) and specialChars(1)');
      assert.match((await inject(ts.app, jar, 'GET', realmUrl)).body, /id="policy-now">At least 12 characters, with at least 1 special character\.</);

      const userUrl = `${realmUrl}/users/${ts.user.id}`;
      res = await inject(ts.app, jar, 'POST', `${userUrl}/password`, { csrf, password: 'twelvechars1' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /the password must contain at least 1 special character/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/password`, { csrf, password: 'twelve chars!' });
      assert.equal(res.statusCode, 303);
      assert.ok(await verifyPassword((await ts.store.users.get(ts.user.id))!.passwordHash, 'twelve chars!'));
      // Emptied: none again.
      res = await inject(ts.app, jar, 'POST', `${realmUrl}/password-policy`, { csrf, passwordPolicy: '' });
      assert.equal(res.statusCode, 303);
      assert.equal((await ts.store.realms.get(REALM))?.passwordPolicy, '');
    } finally {
      await ts.close();
    }
  });
}
