// A user's attributes in the admin console over real HTTP (inject) on both databases: shown, set (one
// value per line) and removed by manage-users, refused with the reason, read-only for view-users,
// escaped, recorded as admin events, and in the user's next token where a scope releases them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, aliceClaims, consoleEvents, csrfOf, setup, signIn } from '../helpers/console.js';
import { updateUser } from '../../src/admin/operations/users.js';

for (const dialect of dialects()) {
  test(`[${dialect}] console: a user's attributes set, refused, removed, escaped, and in the next token`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const alice = (await ts.store.users.findByUsername(REALM, 'alice'))!;
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${alice.id}`;
      const csrf = await csrfOf(ts, jar, userUrl);
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /<h2>Attributes<\/h2>\s*<p class="muted">No attributes\.<\/p>/);

      let res = await inject(ts.app, jar, 'POST', `${userUrl}/attributes`, { csrf, name: 'locale', values: 'fr' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=attribute-set`);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/attributes`, { csrf, name: 'skills', values: 'java\r\ngo\r\n' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await ts.store.users.get(alice.id))!.attributes, { locale: ['fr'], skills: ['java', 'go'] });
      const page = await inject(ts.app, jar, 'GET', `${userUrl}?done=attribute-set`);
      assert.match(page.body, /<strong>skills<\/strong> <span class="attribute-values"><code>java<\/code>, <code>go<\/code><\/span>/);
      assert.match(page.body, /The attribute was set/);
      // Set again: the name's values are replaced, the others stay.
      await inject(ts.app, jar, 'POST', `${userUrl}/attributes`, { csrf, name: 'skills', values: 'rust' });
      assert.deepEqual((await ts.store.users.get(alice.id))!.attributes, { locale: ['fr'], skills: ['rust'] });
      // The profile scope releases locale in the user's next token (as Keycloak's default mapper does).
      assert.equal((await aliceClaims(ts)).locale, 'fr');

      // Refusals: the reason on the page, nothing changed.
      for (const [form, reason] of [
        [{ name: 'skills', values: '\n\n' }, /at least one value/],
        [{ name: 'x'.repeat(300), values: 'v' }, /255/],
        [{ name: 'email', values: 'a@b.example' }, /email/],
        [{ name: 'big', values: 'v'.repeat(3000) }, /2,?048/],
      ] as const) {
        const refused = await inject(ts.app, jar, 'POST', `${userUrl}/attributes`, { csrf, ...form });
        assert.equal(refused.statusCode, 400, JSON.stringify(form).slice(0, 80));
        assert.match(refused.body, /class="error"/);
        assert.match(refused.body, reason);
      }
      assert.deepEqual((await ts.store.users.get(alice.id))!.attributes, { locale: ['fr'], skills: ['rust'] });

      // Hostile names and values are escaped, invisible characters shown.
      await updateUser(ts.store, { realmId: REALM, user: alice.id, setAttributes: { '<b>x</b>': ['<script>alert(1)</script>', 'a\u202eb'] } });
      const hostile = (await inject(ts.app, jar, 'GET', userUrl)).body;
      assert.doesNotMatch(hostile, /<script>alert|<b>x<\/b>/);
      assert.match(hostile, /&lt;b&gt;x&lt;\/b&gt;/);
      assert.match(hostile, /a\\u\{202e\}b/);

      res = await inject(ts.app, jar, 'POST', `${userUrl}/attributes/remove`, { csrf, name: 'skills' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=attribute-removed`);
      assert.equal((await ts.store.users.get(alice.id))!.attributes.skills, undefined);
      assert.ok((await consoleEvents(ts)).filter((e) => e === `UPDATE USER users/${alice.id}`).length >= 4);

      // view-users reads the attributes, without the forms; its POST is refused.
      const viewer = await signIn(ts, VIEWER);
      const viewer2 = (await ts.store.users.findByUsername('master', VIEWER.username))!;
      await updateUser(ts.store, { realmId: 'master', user: viewer2.id, setAttributes: { team: ['ops'] } });
      const viewerUrl = `${CONSOLE}/realms/master/users/${viewer2.id}`;
      const seen = await inject(ts.app, viewer, 'GET', viewerUrl);
      assert.equal(seen.statusCode, 200);
      assert.match(seen.body, /<strong>team<\/strong>/);
      assert.doesNotMatch(seen.body, /Set attribute|attributes\/remove/);
      const viewerCsrf = /name="csrf" value="([^"]*)"/.exec(seen.body)![1]!;
      const refused = await inject(ts.app, viewer, 'POST', `${viewerUrl}/attributes`, { csrf: viewerCsrf, name: 'team', values: 'dev' });
      assert.equal(refused.statusCode, 403);
      assert.deepEqual((await ts.store.users.get(viewer2.id))!.attributes, { team: ['ops'] });
    } finally {
      await ts.close();
    }
  });
}
