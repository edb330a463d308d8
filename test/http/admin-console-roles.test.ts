// The admin console's roles over real HTTP (inject) on both databases: realm roles on their page, client
// roles on the client's page, a user's roles on the user's page; created, renamed, deleted, granted and
// revoked through the forms and carried in the next access token; refusals said on the page; view-only
// admins see no forms and a forged POST is refused; CSRF; hostile names escaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, csrfOf, setup, signIn, aliceClaims, consoleEvents } from '../helpers/console.js';
import { createUser } from '../../src/admin/operations/users.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { BOOTSTRAP_ACTOR } from '../../src/admin/operations/common.js';

const ROLES = `${CONSOLE}/realms/${REALM}/roles`;
const roleUrl = (base: string, name: string): string => `${base}/role?name=${encodeURIComponent(name)}`;


for (const dialect of dialects()) {
  test(`[${dialect}] console roles: realm roles created, renamed, deleted through the forms; refusals said on the page`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const list = await inject(ts.app, jar, 'GET', ROLES);
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /<h1>Roles<\/h1>/);
      assert.match(list.body, /No roles yet/);
      const current = [...list.body.matchAll(/<a href="([^"]+)" aria-current="page">Roles<\/a>/g)].map((m) => m[1]);
      assert.deepEqual(current, [ROLES], 'the navigation links the roles and marks them current');
      const csrf = /name="csrf" value="([^"]*)"/.exec(list.body)![1]!;

      let res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name: 'editor', description: 'Edits articles' });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.equal(res.headers.location, `${roleUrl(ROLES, 'editor')}&done=role-created`);
      const page = await inject(ts.app, jar, 'GET', res.headers.location as string);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h1>editor<\/h1>/);
      assert.match(page.body, /class="notice"[^>]*>The role was created\.</);
      assert.match(page.body, /<dt>Description<\/dt><dd>Edits articles<\/dd>/);
      assert.equal((await ts.store.roles.find(REALM, '', 'editor'))?.description, 'Edits articles');

      // Refused: a name already taken, a '/', a control character, blank; the form keeps what was typed.
      // '..' and '.': the admin REST API names a role in its path, where an HTTP client resolves them away
      // (keycloak-admin-client's roles.delByName({name: '..'}) deleted the realm).
      for (const [name, why] of [['editor', /already exists/], ['a/b', /must not contain &#39;\/&#39;/], ['a\u0007b', /control characters/], ['', /non-empty/], ['..', /the role name must not be/], ['.', /the role name must not be/]] as const) {
        res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name, description: 'kept' });
        assert.equal(res.statusCode, 400, name);
        assert.match(res.body, /class="error" role="alert"/, name);
        assert.match(res.body, why, name);
        assert.match(res.body, /id="roleDescription" name="description" autocomplete="off" value="kept"/, name);
      }
      assert.equal((await ts.store.roles.list(REALM, '')).length, 1);

      // Any other valid name works, dots too: the console names a role in the query and in form fields.
      res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name: '...' });
      assert.equal(res.headers.location, `${ROLES}/role?name=...&done=role-created`);
      assert.match((await inject(ts.app, jar, 'GET', roleUrl(ROLES, '...'))).body, /<h1>\.\.\.<\/h1>/);
      res = await inject(ts.app, jar, 'POST', `${ROLES}/delete`, { csrf, role: '...', confirm: '...' });
      assert.equal(res.statusCode, 303);
      assert.equal(await ts.store.roles.find(REALM, '', '...'), undefined);

      // A second role, granted to alice: the list counts the holders.
      res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name: 'viewer' });
      assert.equal(res.statusCode, 303);
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', names: ['editor'] }, BOOTSTRAP_ACTOR);
      const counted = await inject(ts.app, jar, 'GET', ROLES);
      assert.match(counted.body, /<a href="[^"]*role\?name=editor">editor<\/a><\/td><td data-label="Description">Edits articles<\/td><td data-label="Users">1<\/td>/);
      assert.match(counted.body, /role\?name=viewer">viewer<\/a><\/td><td data-label="Description"><\/td><td data-label="Users">0<\/td>/);
      assert.match((await inject(ts.app, jar, 'GET', roleUrl(ROLES, 'editor'))).body, new RegExp(`<li><a href="${CONSOLE}/realms/${REALM}/users/${ts.user.id}">alice</a>`));

      // Renamed: alice's next token carries the new name. A name taken is said on the page.
      res = await inject(ts.app, jar, 'POST', `${ROLES}/update`, { csrf, role: 'editor', name: 'viewer', description: 'Edits articles' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /already exists/);
      assert.match(res.body, /<h1>editor<\/h1>/);
      res = await inject(ts.app, jar, 'POST', `${ROLES}/update`, { csrf, role: 'editor', name: 'author', description: 'Writes articles' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${roleUrl(ROLES, 'author')}&done=role-saved`);
      assert.equal(await ts.store.roles.find(REALM, '', 'editor'), undefined);
      assert.equal((await ts.store.roles.find(REALM, '', 'author'))?.description, 'Writes articles');
      assert.deepEqual((await aliceClaims(ts)).realm_access, { roles: ['author'] });
      // An empty description removes it.
      res = await inject(ts.app, jar, 'POST', `${ROLES}/update`, { csrf, role: 'viewer', name: 'viewer', description: '' });
      assert.equal(res.statusCode, 303);

      // Deleting needs the name typed again; then alice's next token no longer carries it.
      for (const confirm of ['', 'autho', 'AUTHOR']) {
        res = await inject(ts.app, jar, 'POST', `${ROLES}/delete`, { csrf, role: 'author', confirm });
        assert.equal(res.statusCode, 400, confirm);
        assert.match(res.body, /Type the role name/);
      }
      res = await inject(ts.app, jar, 'POST', `${ROLES}/delete`, { csrf, role: 'author', confirm: 'author' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${ROLES}?done=role-deleted`);
      assert.match((await inject(ts.app, jar, 'GET', res.headers.location as string)).body, /The role was deleted/);
      assert.equal(await ts.store.roles.find(REALM, '', 'author'), undefined);
      assert.equal((await aliceClaims(ts)).realm_access, undefined);
      // A role that is gone: its page and its forms answer 404.
      assert.equal((await inject(ts.app, jar, 'GET', roleUrl(ROLES, 'author'))).statusCode, 404);
      assert.equal((await inject(ts.app, jar, 'POST', `${ROLES}/delete`, { csrf, role: 'author', confirm: 'author' })).statusCode, 404);

      const events = await consoleEvents(ts);
      for (const e of ['CREATE REALM_ROLE roles/editor', 'CREATE REALM_ROLE roles/viewer', 'UPDATE REALM_ROLE roles/editor', 'UPDATE REALM_ROLE roles/viewer', 'DELETE REALM_ROLE roles/author']) {
        assert.ok(events.includes(e), `${e} in ${events.join()}`);
      }
      const created = (await ts.store.adminEvents.list(REALM, {})).find((e) => e.resourcePath === 'roles/editor' && e.operation === 'CREATE')!;
      assert.equal(created.authUsername, 'admin');
      assert.equal(created.authRealmId, 'master');
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: master's admin roles shown as such, offering no rename or delete, and refused when forged`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const masterRoles = `${CONSOLE}/realms/master/roles`;
      const list = await inject(ts.app, jar, 'GET', masterRoles);
      assert.match(list.body, /role\?name=admin">admin<\/a> <span class="muted">\(admin role\)<\/span><\/td><td data-label="Description">Administrator of every realm<\/td><td data-label="Users">1<\/td>/);
      assert.match(list.body, /role\?name=create-realm">create-realm<\/a> <span class="muted">\(admin role\)/);
      const page = await inject(ts.app, jar, 'GET', roleUrl(masterRoles, 'admin'));
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /cannot be renamed or deleted/);
      assert.doesNotMatch(page.body, /Save role|Delete role/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      let res = await inject(ts.app, jar, 'POST', masterRoles, { csrf, name: 'admin' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /already exists/);
      res = await inject(ts.app, jar, 'POST', `${masterRoles}/update`, { csrf, role: 'admin', name: 'boss', description: '' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"[^>]*>admin is one of Realmgate&#39;s admin roles/);
      res = await inject(ts.app, jar, 'POST', `${masterRoles}/delete`, { csrf, role: 'create-realm', confirm: 'create-realm' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /cannot be deleted/);
      assert.ok(await ts.store.roles.find('master', '', 'admin'));
      assert.ok(await ts.store.roles.find('master', '', 'create-realm'));
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: a client's roles on its page; realm-management's admin roles take none`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const clientUrl = `${CONSOLE}/realms/${REALM}/clients/${encodeURIComponent(ts.client.id)}`;
      const base = `${clientUrl}/roles`;
      const page = await inject(ts.app, jar, 'GET', clientUrl);
      assert.match(page.body, /<h2>Client roles<\/h2>/);
      assert.match(page.body, new RegExp(`<code>resource_access\\.${ts.client.id}\\.roles</code>`));
      assert.match(page.body, /Create role/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;

      let res = await inject(ts.app, jar, 'POST', base, { csrf, name: 'reader', description: 'Reads' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${roleUrl(base, 'reader')}&done=role-created`);
      const rolePage = await inject(ts.app, jar, 'GET', res.headers.location as string);
      assert.match(rolePage.body, /<h1>reader<\/h1>/);
      assert.match(rolePage.body, new RegExp(`client role of <a href="${clientUrl}">${ts.client.id}</a>`));
      // A name taken is said on the client's page, with the form as typed.
      res = await inject(ts.app, jar, 'POST', base, { csrf, name: 'reader', description: 'Again' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /<h2>Client roles<\/h2>/);
      assert.match(res.body, /class="error"[^>]*>Role with name reader already exists/);
      assert.match(res.body, /value="Again"/);
      // The same name as a realm role is another role.
      assert.equal((await inject(ts.app, jar, 'POST', ROLES, { csrf, name: 'reader' })).statusCode, 303);

      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: ts.client.id, names: ['reader'] }, BOOTSTRAP_ACTOR);
      assert.deepEqual((await aliceClaims(ts)).resource_access, { [ts.client.id]: { roles: ['reader'] } });
      res = await inject(ts.app, jar, 'POST', `${base}/update`, { csrf, role: 'reader', name: 'reviewer', description: 'Reviews' });
      assert.equal(res.statusCode, 303);
      assert.deepEqual((await aliceClaims(ts)).resource_access, { [ts.client.id]: { roles: ['reviewer'] } });
      assert.match((await inject(ts.app, jar, 'GET', clientUrl)).body, /role\?name=reviewer">reviewer<\/a><\/td><td data-label="Description">Reviews<\/td><td data-label="Users">1<\/td>/);
      res = await inject(ts.app, jar, 'POST', `${base}/delete`, { csrf, role: 'reviewer', confirm: 'reviewer' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${clientUrl}?done=role-deleted`);
      assert.equal((await aliceClaims(ts)).resource_access, undefined);
      assert.ok(await ts.store.roles.find(REALM, '', 'reader'), 'the realm role of the same name stays');
      const events = await consoleEvents(ts);
      const path = `clients/${ts.client.id}/roles`;
      for (const e of [`CREATE CLIENT_ROLE ${path}/reader`, `UPDATE CLIENT_ROLE ${path}/reader`, `DELETE CLIENT_ROLE ${path}/reviewer`]) assert.ok(events.includes(e), `${e} in ${events.join()}`);

      // realm-management: its roles are listed as admin roles, with no form; a forged one is refused.
      const rm = `${CONSOLE}/realms/${REALM}/clients/realm-management`;
      const rmPage = await inject(ts.app, jar, 'GET', rm);
      assert.match(rmPage.body, /role\?name=realm-admin">realm-admin<\/a> <span class="muted">\(admin role\)<\/span>/);
      assert.doesNotMatch(rmPage.body, /Create role/);
      const rmRole = await inject(ts.app, jar, 'GET', roleUrl(`${rm}/roles`, 'manage-users'));
      assert.equal(rmRole.statusCode, 200);
      assert.doesNotMatch(rmRole.body, /Save role|Delete role/);
      res = await inject(ts.app, jar, 'POST', `${rm}/roles`, { csrf, name: 'superuser' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /cannot be added, renamed or deleted/);
      res = await inject(ts.app, jar, 'POST', `${rm}/roles/delete`, { csrf, role: 'view-users', confirm: 'view-users' });
      assert.equal(res.statusCode, 400);
      assert.equal(await ts.store.roles.find(REALM, 'realm-management', 'superuser'), undefined);
      assert.ok(await ts.store.roles.find(REALM, 'realm-management', 'view-users'));
      // An unknown client: 404.
      assert.equal((await inject(ts.app, jar, 'POST', `${CONSOLE}/realms/${REALM}/clients/nope/roles`, { csrf, name: 'x' })).statusCode, 404);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: a user's roles granted and revoked on the user's page, carried in the next token`, async () => {
    const ts = await setup(dialect);
    try {
      await createRole(ts.store, { realmId: REALM, clientId: '', name: 'editor', description: 'Edits' }, BOOTSTRAP_ACTOR);
      const reader = await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'reader' }, BOOTSTRAP_ACTOR);
      const masterAdmin = (await ts.store.roles.find('master', '', 'admin'))!;
      const jar = await signIn(ts, ADMIN);
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`;
      const page = await inject(ts.app, jar, 'GET', userUrl);
      assert.match(page.body, /<h2>Roles<\/h2>\n<p class="muted">No roles\.<\/p>/);
      // The select groups the realm's roles and each client's (realm-management's admin roles too).
      assert.match(page.body, /<select id="grantRole" name="role" required><optgroup label="Realm roles"><option value="[^"]+">editor<\/option><\/optgroup>/);
      assert.match(page.body, new RegExp(`<optgroup label="Client ${ts.client.id}"><option value="${reader.id}">reader</option></optgroup>`));
      assert.match(page.body, /<optgroup label="Client realm-management">.*<option value="[^"]+">view-users<\/option>/);
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;
      const editor = (await ts.store.roles.find(REALM, '', 'editor'))!;

      let res = await inject(ts.app, jar, 'POST', `${userUrl}/roles`, { csrf, role: editor.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=role-granted`);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/roles`, { csrf, role: reader.id });
      assert.equal(res.statusCode, 303);
      const claims = await aliceClaims(ts);
      assert.deepEqual(claims.realm_access, { roles: ['editor'] });
      assert.deepEqual(claims.resource_access, { [ts.client.id]: { roles: ['reader'] } });
      const shown = await inject(ts.app, jar, 'GET', `${userUrl}?done=role-granted`);
      assert.match(shown.body, /The role was granted/);
      assert.match(shown.body, /<li class="row"><span>editor <span class="muted">realm role<\/span><\/span><form method="post" action="[^"]+\/roles\/remove"/);
      assert.match(shown.body, new RegExp(`<span>reader <span class="muted">client role of ${ts.client.id}</span>`));
      assert.doesNotMatch(shown.body, /<option value="[^"]+">editor<\/option>/, 'a role held is not offered again');

      // Refused with the reason: no role, a role id of another realm (master's admin), an unknown id.
      for (const role of ['', masterAdmin.id, 'no-such-role']) {
        res = await inject(ts.app, jar, 'POST', `${userUrl}/roles`, { csrf, role });
        assert.equal(res.statusCode, 400, role);
        assert.match(res.body, /class="error"[^>]*>That role does not exist/);
      }
      assert.deepEqual((await ts.store.roles.userRoles(ts.user.id)).realm, ['editor']);

      res = await inject(ts.app, jar, 'POST', `${userUrl}/roles/remove`, { csrf, role: editor.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=role-revoked`);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/roles/remove`, { csrf, role: reader.id });
      assert.equal(res.statusCode, 303);
      const after = await aliceClaims(ts);
      assert.equal(after.realm_access, undefined);
      assert.equal(after.resource_access, undefined);
      assert.match((await inject(ts.app, jar, 'GET', `${userUrl}?done=role-revoked`)).body, /The role was revoked/);

      const events = await consoleEvents(ts);
      const path = `users/${ts.user.id}/role-mappings`;
      for (const e of [`CREATE REALM_ROLE_MAPPING ${path}/realm`, `CREATE CLIENT_ROLE_MAPPING ${path}/clients/${ts.client.id}`, `DELETE REALM_ROLE_MAPPING ${path}/realm`, `DELETE CLIENT_ROLE_MAPPING ${path}/clients/${ts.client.id}`]) {
        assert.ok(events.includes(e), `${e} in ${events.join()}`);
      }
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: a role's Contains section adds and removes contained roles; its holders' next token carries them; refusals said on the page`, async () => {
    // Configuration cached for a minute, as in production: the console's change must reach the next token anyway.
    const ts = await setup(dialect, { cacheTtlMs: 60_000 });
    try {
      const editor = await createRole(ts.store, { realmId: REALM, clientId: '', name: 'editor' }, BOOTSTRAP_ACTOR);
      const viewer = await createRole(ts.store, { realmId: REALM, clientId: '', name: 'viewer' }, BOOTSTRAP_ACTOR);
      const reader = await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'reader' }, BOOTSTRAP_ACTOR);
      const writer = await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'writer' }, BOOTSTRAP_ACTOR);
      const masterAdmin = (await ts.store.roles.find('master', '', 'admin'))!;
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', names: ['editor'] }, BOOTSTRAP_ACTOR);
      // Her token before: editor alone (and the server caches that no role of the realm contains another).
      assert.deepEqual((await aliceClaims(ts)).realm_access, { roles: ['editor'] });
      const jar = await signIn(ts, ADMIN);
      const clientUrl = `${CONSOLE}/realms/${REALM}/clients/${encodeURIComponent(ts.client.id)}`;
      const clientRoles = `${clientUrl}/roles`;
      const editorUrl = roleUrl(ROLES, 'editor');

      const page = await inject(ts.app, jar, 'GET', editorUrl);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2>Contains<\/h2>\n<p class="muted">Whoever holds this role also holds the roles it contains \(and what they contain\), in their tokens\.<\/p>\n<p class="muted">No roles: it is not a composite role\.<\/p>/);
      // The select offers the realm's roles and its clients' (realm-management's too), not the role itself.
      assert.match(page.body, new RegExp(`<select id="containRole" name="contained" required><optgroup label="Realm roles"><option value="${viewer.id}">viewer</option></optgroup>`));
      assert.match(page.body, new RegExp(`<optgroup label="Client ${ts.client.id}"><option value="${reader.id}">reader</option><option value="${writer.id}">writer</option></optgroup>`));
      assert.match(page.body, /<optgroup label="Client realm-management">.*<option value="[^"]+">view-users<\/option>/);
      assert.doesNotMatch(page.body, new RegExp(`<option value="${editor.id}">`));
      const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)![1]!;

      // Added: a realm role and a client role; alice, who holds editor, carries them in her next token.
      for (const role of [viewer, reader]) {
        const res = await inject(ts.app, jar, 'POST', `${ROLES}/composites`, { csrf, role: 'editor', contained: role.id });
        assert.equal(res.statusCode, 303, res.body.slice(0, 300));
        assert.equal(res.headers.location, `${editorUrl}&done=composite-added`);
      }
      assert.deepEqual((await ts.store.roles.composites(editor.id)).map((r) => r.id), [viewer.id, reader.id]);
      const claims = await aliceClaims(ts);
      assert.deepEqual((claims.realm_access as { roles: string[] }).roles.sort(), ['editor', 'viewer']);
      assert.deepEqual(claims.resource_access, { [ts.client.id]: { roles: ['reader'] } });
      assert.deepEqual((await ts.store.roles.effectiveRoles(ts.user.id)).map((r) => r.name).sort(), ['editor', 'reader', 'viewer']);

      const shown = await inject(ts.app, jar, 'GET', `${editorUrl}&done=composite-added`);
      assert.match(shown.body, /class="notice"[^>]*>The role now contains it/);
      assert.match(shown.body, new RegExp(`<li class="row"><span><a href="${ROLES}/role\\?name=viewer">viewer</a> <span class="muted">realm role</span></span><form method="post" action="${ROLES}/composites/remove" class="inline-form">`));
      assert.match(shown.body, new RegExp(`<li class="row"><span><a href="${clientRoles}/role\\?name=reader">${ts.client.id}/reader</a> <span class="muted">client role of ${ts.client.id}</span></span><form`));
      assert.match(shown.body, new RegExp(`<input type="hidden" name="role" value="editor"><input type="hidden" name="contained" value="${viewer.id}"><button type="submit" class="secondary">Remove</button>`));
      assert.doesNotMatch(shown.body, new RegExp(`<option value="(${viewer.id}|${reader.id})">`), 'a role contained is not offered again');
      assert.match(shown.body, new RegExp(`<option value="${writer.id}">writer</option>`));
      // The roles list says which role is composite.
      const list = await inject(ts.app, jar, 'GET', ROLES);
      assert.match(list.body, /role\?name=editor">editor<\/a> <span class="muted">\(composite\)<\/span><\/td>/);
      assert.match(list.body, /role\?name=viewer">viewer<\/a><\/td>/);

      // A client role's page: the same section, posting to the client's roles; the client's page marks it.
      let res = await inject(ts.app, jar, 'POST', `${clientRoles}/composites`, { csrf, role: 'writer', contained: viewer.id });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.equal(res.headers.location, `${roleUrl(clientRoles, 'writer')}&done=composite-added`);
      assert.deepEqual((await ts.store.roles.composites(writer.id)).map((r) => r.name), ['viewer']);
      const client = await inject(ts.app, jar, 'GET', clientUrl);
      assert.match(client.body, /role\?name=writer">writer<\/a> <span class="muted">\(composite\)<\/span><\/td>/);
      assert.match(client.body, /role\?name=reader">reader<\/a><\/td>/);

      // Refused on the role's page: the role itself, a role that contains it, no role or one of another realm or unknown.
      res = await inject(ts.app, jar, 'POST', `${ROLES}/composites`, { csrf, role: 'editor', contained: editor.id });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /<h1>editor<\/h1>/);
      assert.match(res.body, /class="error"[^>]*>role editor cannot contain itself/);
      res = await inject(ts.app, jar, 'POST', `${ROLES}/composites`, { csrf, role: 'viewer', contained: editor.id });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /<h1>viewer<\/h1>/);
      assert.match(res.body, /class="error"[^>]*>role viewer cannot contain a role that contains it/);
      for (const contained of ['', masterAdmin.id, 'no-such-role']) {
        res = await inject(ts.app, jar, 'POST', `${ROLES}/composites`, { csrf, role: 'editor', contained });
        assert.equal(res.statusCode, 400, contained);
        assert.match(res.body, /class="error"[^>]*>That role does not exist/, contained);
      }
      // A role of the form that does not exist: 404, as the other forms.
      assert.equal((await inject(ts.app, jar, 'POST', `${ROLES}/composites`, { csrf, role: 'nobody', contained: viewer.id })).statusCode, 404);
      assert.deepEqual((await ts.store.roles.composites(viewer.id)).map((r) => r.name), []);
      assert.deepEqual((await ts.store.roles.composites(editor.id)).map((r) => r.name), ['viewer', 'reader']);

      // Removed: alice's next token no longer carries it.
      res = await inject(ts.app, jar, 'POST', `${ROLES}/composites/remove`, { csrf, role: 'editor', contained: viewer.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${editorUrl}&done=composite-removed`);
      assert.deepEqual((await ts.store.roles.composites(editor.id)).map((r) => r.name), ['reader']);
      assert.deepEqual((await aliceClaims(ts)).realm_access, { roles: ['editor'] });
      assert.match((await inject(ts.app, jar, 'GET', res.headers.location as string)).body, /The role no longer contains it/);

      const events = await consoleEvents(ts);
      for (const e of ['CREATE REALM_ROLE roles/editor/composites', 'DELETE REALM_ROLE roles/editor/composites', `CREATE CLIENT_ROLE clients/${ts.client.id}/roles/writer/composites`]) {
        assert.ok(events.includes(e), `${e} in ${events.join()}`);
      }
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: a view-only admin sees no forms and a forged POST is refused; CSRF missing or wrong is refused`, async () => {
    const ts = await setup(dialect);
    try {
      // A master admin who may read master's realm, clients and users, and change nothing.
      const reader = { username: 'auditor', password: 'auditor password 42' };
      const { id } = await createUser(ts.store, { realmId: 'master', ...reader });
      await grantRolesByName(ts.store, { realmId: 'master', userId: id, clientId: 'realm-management', names: ['view-realm', 'view-clients', 'view-users'] }, BOOTSTRAP_ACTOR);
      await createRole(ts.store, { realmId: 'master', clientId: '', name: 'ops' }, BOOTSTRAP_ACTOR);
      const opsClient = await createRole(ts.store, { realmId: 'master', clientId: 'security-admin-console', name: 'operator' }, BOOTSTRAP_ACTOR);
      const ops = (await ts.store.roles.find('master', '', 'ops'))!;
      // ops contains audit: listed, with no Remove button.
      const audit = await createRole(ts.store, { realmId: 'master', clientId: '', name: 'audit' }, BOOTSTRAP_ACTOR);
      await ts.store.roles.addComposites('master', ops.id, [audit.id]);
      await grantRolesByName(ts.store, { realmId: 'master', userId: id, clientId: '', names: ['ops'] }, BOOTSTRAP_ACTOR);
      const masterRoles = `${CONSOLE}/realms/master/roles`;
      const client = `${CONSOLE}/realms/master/clients/security-admin-console`;
      const userUrl = `${CONSOLE}/realms/master/users/${id}`;

      const jar = await signIn(ts, reader);
      const pages = [masterRoles, roleUrl(masterRoles, 'ops'), client, roleUrl(`${client}/roles`, 'operator'), userUrl];
      for (const url of pages) {
        const res = await inject(ts.app, jar, 'GET', url);
        assert.equal(res.statusCode, 200, url);
        assert.doesNotMatch(res.body, /Create role|Save role|Delete role|Grant role|>Revoke<|Add contained role|>Remove<|composites/, url);
      }
      assert.match((await inject(ts.app, jar, 'GET', roleUrl(masterRoles, 'ops'))).body, /<h2>Contains<\/h2>[^]*<span><a href="[^"]+role\?name=audit">audit<\/a> <span class="muted">realm role<\/span><\/span><\/li>/);
      assert.match((await inject(ts.app, jar, 'GET', roleUrl(masterRoles, 'ops'))).body, />auditor<\/a>/, 'view-users shows who holds it');
      assert.match((await inject(ts.app, jar, 'GET', userUrl)).body, /<li class="row"><span>ops <span class="muted">realm role<\/span><\/span><\/li>/);
      const csrf = await csrfOf(ts, jar, masterRoles);
      const forged: Array<[string, Record<string, string>, RegExp]> = [
        [masterRoles, { name: 'mine' }, /manage-realm/],
        [`${masterRoles}/update`, { role: 'ops', name: 'mine' }, /manage-realm/],
        [`${masterRoles}/delete`, { role: 'ops', confirm: 'ops' }, /manage-realm/],
        [`${client}/roles`, { name: 'mine' }, /manage-clients/],
        [`${client}/roles/update`, { role: 'operator', name: 'mine' }, /manage-clients/],
        [`${client}/roles/delete`, { role: 'operator', confirm: 'operator' }, /manage-clients/],
        [`${userUrl}/roles`, { role: opsClient.id }, /manage-users/],
        [`${userUrl}/roles/remove`, { role: ops.id }, /manage-users/],
        [`${masterRoles}/composites`, { role: 'ops', contained: opsClient.id }, /manage-realm/],
        [`${masterRoles}/composites/remove`, { role: 'ops', contained: audit.id }, /manage-realm/],
        [`${client}/roles/composites`, { role: 'operator', contained: ops.id }, /manage-clients/],
      ];
      for (const [url, form, why] of forged) {
        const res = await inject(ts.app, jar, 'POST', url, { csrf, ...form });
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, why, url);
      }
      // The viewer of master's users only may not read the roles, nor another realm's.
      const viewer = await signIn(ts, { username: 'viewer', password: 'viewer password 42' });
      assert.equal((await inject(ts.app, viewer, 'GET', masterRoles)).statusCode, 403);
      assert.equal((await inject(ts.app, jar, 'GET', ROLES)).statusCode, 403);

      // The full admin, without the right CSRF token: refused, nothing changes.
      const admin = await signIn(ts, ADMIN);
      const other = await csrfOf(ts, await signIn(ts, ADMIN), masterRoles);
      for (const token of [undefined, '', 'forged', other]) {
        const form: Record<string, string> = token === undefined ? {} : { csrf: token };
        const posts: Array<[string, Record<string, string>]> = [
          [masterRoles, { name: 'mine' }],
          [`${masterRoles}/update`, { role: 'ops', name: 'mine' }],
          [`${masterRoles}/delete`, { role: 'ops', confirm: 'ops' }],
          [`${client}/roles`, { name: 'mine' }],
          [`${userUrl}/roles`, { role: opsClient.id }],
          [`${userUrl}/roles/remove`, { role: ops.id }],
          [`${masterRoles}/composites`, { role: 'ops', contained: opsClient.id }],
          [`${masterRoles}/composites/remove`, { role: 'ops', contained: audit.id }],
        ];
        for (const [url, fields] of posts) {
          const res = await inject(ts.app, admin, 'POST', url, { ...form, ...fields });
          assert.equal(res.statusCode, 403, `${url} ${String(token)}`);
          assert.match(res.body, /Form expired/);
        }
      }
      assert.deepEqual((await ts.store.roles.list('master', '')).map((r) => r.name), ['admin', 'audit', 'create-realm', 'ops']);
      assert.deepEqual((await ts.store.roles.composites(ops.id)).map((r) => r.name), ['audit']);
      assert.deepEqual((await ts.store.roles.composites(opsClient.id)).map((r) => r.name), []);
      assert.deepEqual((await ts.store.roles.userRoles(id)).realm, ['audit', 'ops'], 'ops, and audit through it');
      assert.deepEqual(await consoleEvents(ts, 'master'), []);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: hostile role names and descriptions are shown as text`, async () => {
    const ts = await setup(dialect);
    try {
      const script = '<script>alert(1)</script>';
      const img = '<img src=x onerror=alert(2)>"\'';
      const jar = await signIn(ts, ADMIN);
      const csrf = await csrfOf(ts, jar, ROLES);
      // The form refuses the script tag's name (it holds a '/'), and says so with the name escaped.
      let res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name: script, description: script });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /must not contain/);
      assert.doesNotMatch(res.body, /<script>alert/);
      assert.ok(res.body.includes('value="&lt;script&gt;alert(1)&lt;/script&gt;"'));
      // Created through the form: the name goes into URLs (percent-encoded) and pages (escaped).
      res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name: img, description: script });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${ROLES}/role?name=%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E%22'&done=role-created`);
      // As a database may hold it all the same (written before the name rules, or by hand): shown as text too.
      await ts.store.roles.create({ id: 'r-script', realmId: REALM, clientId: '', name: script, description: img }, 0);
      await ts.store.roles.create({ id: 'c-script', realmId: REALM, clientId: ts.client.id, name: script, description: null }, 0);
      await grantRolesByName(ts.store, { realmId: REALM, userId: ts.user.id, clientId: '', names: [script, img] }, BOOTSTRAP_ACTOR);
      await ts.store.roles.addComposites(REALM, 'r-script', ['c-script']);
      const clientUrl = `${CONSOLE}/realms/${REALM}/clients/${encodeURIComponent(ts.client.id)}`;
      const pages = [ROLES, roleUrl(ROLES, script), roleUrl(ROLES, img), clientUrl, roleUrl(`${clientUrl}/roles`, script), `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`, `${CONSOLE}/realms/${REALM}/events`];
      for (const url of pages) {
        const page = await inject(ts.app, jar, 'GET', url);
        assert.equal(page.statusCode, 200, url);
        assert.doesNotMatch(page.body, /<script>alert|<img src=x/, url);
        assert.ok(page.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;') || page.body.includes('&lt;img src=x onerror=alert(2)&gt;&quot;&#39;'), url);
      }
      const rolePage = await inject(ts.app, jar, 'GET', roleUrl(ROLES, script));
      assert.match(rolePage.body, /<h1>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h1>/);
      assert.ok(rolePage.body.includes('<input type="hidden" name="role" value="&lt;script&gt;alert(1)&lt;/script&gt;">'));
      assert.ok(rolePage.body.includes('<dt>Description</dt><dd>&lt;img src=x onerror=alert(2)&gt;&quot;&#39;</dd>'));
      // Its Contains section: the client role contained, as client/name, linked by its percent-encoded name.
      assert.ok(rolePage.body.includes(`role?name=%3Cscript%3Ealert(1)%3C%2Fscript%3E">${ts.client.id}/&lt;script&gt;alert(1)&lt;/script&gt;</a>`));
      assert.ok(rolePage.body.includes('<input type="hidden" name="role" value="&lt;script&gt;alert(1)&lt;/script&gt;"><input type="hidden" name="contained" value="c-script">'));
      const user = await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`);
      assert.ok(user.body.includes('<span>&lt;script&gt;alert(1)&lt;/script&gt; <span class="muted">realm role</span>'));
      assert.ok(user.body.includes('<option value="c-script">&lt;script&gt;alert(1)&lt;/script&gt;</option>'));
      // A refused name comes back in the message and the form, escaped.
      res = await inject(ts.app, jar, 'POST', ROLES, { csrf, name: img });
      assert.equal(res.statusCode, 400);
      assert.ok(res.body.includes('Role with name &lt;img src=x onerror=alert(2)&gt;&quot;&#39; already exists'));
      res = await inject(ts.app, jar, 'POST', `${ROLES}/update`, { csrf, role: script, name: '<b>x</b>/y' });
      assert.equal(res.statusCode, 400);
      assert.doesNotMatch(res.body, /<b>x<\/b>/);
      assert.ok(res.body.includes('value="&lt;b&gt;x&lt;/b&gt;/y"'));
      // Deleted by its name as the browser sends the hidden field back.
      res = await inject(ts.app, jar, 'POST', `${ROLES}/delete`, { csrf, role: script, confirm: script });
      assert.equal(res.statusCode, 303);
      assert.equal(await ts.store.roles.find(REALM, '', script), undefined);
      assert.deepEqual((await ts.store.roles.userRoles(ts.user.id)).realm, [img]);
    } finally {
      await ts.close();
    }
  });
}

for (const dialect of dialects()) {
  test(`[${dialect}] console roles: an admin with manage-users grants roles, but no admin role it does not hold (no way to realm-admin)`, async () => {
    const ts = await setup(dialect);
    try {
      const helpdesk = { username: 'helpdesk', password: 'helpdesk password 42' };
      const { id } = await createUser(ts.store, { realmId: 'master', ...helpdesk });
      await grantRolesByName(ts.store, { realmId: 'master', userId: id, clientId: 'realm-management', names: ['manage-users', 'view-realm'] }, BOOTSTRAP_ACTOR);
      const ops = await createRole(ts.store, { realmId: 'master', clientId: '', name: 'ops' }, BOOTSTRAP_ACTOR);
      const realmAdmin = (await ts.store.roles.find('master', 'realm-management', 'realm-admin'))!;
      const masterAdmin = (await ts.store.roles.find('master', '', 'admin'))!;
      const jar = await signIn(ts, helpdesk);
      const userUrl = `${CONSOLE}/realms/master/users/${id}`;
      const csrf = await csrfOf(ts, jar, userUrl);
      for (const role of [realmAdmin, masterAdmin]) {
        const res = await inject(ts.app, jar, 'POST', `${userUrl}/roles`, { csrf, role: role.id });
        assert.equal(res.statusCode, 403, role.name);
        assert.match(res.body, new RegExp(`Only an administrator holding ${role.name} may grant or remove it`));
      }
      const res = await inject(ts.app, jar, 'POST', `${userUrl}/roles`, { csrf, role: ops.id });
      assert.equal(res.statusCode, 303, res.body);
      assert.deepEqual(await ts.store.roles.userRoles(id), { realm: ['ops'], clients: { 'realm-management': ['manage-users', 'view-realm'] } });
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console roles: an admin with manage-realm puts no admin role it does not hold in a composite, nor a composite holding one`, async () => {
    const ts = await setup(dialect);
    try {
      const roleAdmin = { username: 'roleadmin', password: 'roleadmin password 42' };
      const { id } = await createUser(ts.store, { realmId: 'master', ...roleAdmin });
      await grantRolesByName(ts.store, { realmId: 'master', userId: id, clientId: 'realm-management', names: ['manage-realm', 'view-realm'] }, BOOTSTRAP_ACTOR);
      const ops = await createRole(ts.store, { realmId: 'master', clientId: '', name: 'ops' }, BOOTSTRAP_ACTOR);
      const plain = await createRole(ts.store, { realmId: 'master', clientId: '', name: 'plain' }, BOOTSTRAP_ACTOR);
      const manageUsers = (await ts.store.roles.find('master', 'realm-management', 'manage-users'))!;
      // A composite holding manage-users, made by the bootstrap: putting it in ops would hand manage-users out too.
      const bundle = await createRole(ts.store, { realmId: 'master', clientId: '', name: 'bundle', composites: { client: { 'realm-management': ['manage-users'] } } }, BOOTSTRAP_ACTOR);
      const jar = await signIn(ts, roleAdmin);
      const masterRoles = `${CONSOLE}/realms/master/roles`;
      const csrf = await csrfOf(ts, jar, roleUrl(masterRoles, 'ops'));
      for (const role of [manageUsers, bundle]) {
        const res = await inject(ts.app, jar, 'POST', `${masterRoles}/composites`, { csrf, role: 'ops', contained: role.id });
        assert.equal(res.statusCode, 403, role.name);
        assert.match(res.body, /<h1>ops<\/h1>/, role.name);
        assert.match(res.body, /class="error"[^>]*>Only an administrator holding manage-users may grant or remove it/, role.name);
      }
      assert.deepEqual(await ts.store.roles.composites(ops.id), []);
      const res = await inject(ts.app, jar, 'POST', `${masterRoles}/composites`, { csrf, role: 'ops', contained: plain.id });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      assert.deepEqual((await ts.store.roles.composites(ops.id)).map((r) => r.name), ['plain']);
    } finally {
      await ts.close();
    }
  });
}
