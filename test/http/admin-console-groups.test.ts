// The admin console's groups over real HTTP (inject) on both databases: the Groups page (the tree with
// member counts, create at the top or under a group), a group's page (rename, move, delete, subgroups,
// members, role mappings and the roles inherited from above), a user's groups on the user's page; roles
// mapped to a parent group reach a subgroup member's next access token; refusals said on the page;
// view-only admins see no forms and a forged POST is refused; an admin with manage-users cannot hand out
// an admin role through a group (mayMapRole, as for a user's role mappings); CSRF; hostile names escaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REALM, type TestServer } from '../helpers/server.js';
import { dialects } from '../helpers/db.js';
import { inject } from '../helpers/flow.js';
import { ADMIN, CONSOLE, VIEWER, csrfOf, setup, signIn, aliceClaims, consoleEvents } from '../helpers/console.js';
import { createUser } from '../../src/admin/operations/users.js';
import { createRole, grantRolesByName } from '../../src/admin/operations/roles.js';
import { changeGroupRoleMappings, createGroupAtPath, joinGroup } from '../../src/admin/operations/groups.js';
import { BOOTSTRAP_ACTOR } from '../../src/admin/operations/common.js';

const GROUPS = `${CONSOLE}/realms/${REALM}/groups`;

/** The group id a redirect to a group's page names. */
function idOf(location: unknown): string {
  const m = /\/groups\/([^/?]+)\?/.exec(String(location));
  assert.ok(m, `a group page: ${String(location)}`);
  return decodeURIComponent(m[1]!);
}


/** The realm's groups as paths with member counts (what must not change when a change is refused). */
async function treeOf(ts: TestServer, realmId = REALM): Promise<string> {
  const { groupTree } = await import('../../src/admin/operations/groups.js');
  return (await groupTree(ts.store, { realmId })).map((e) => `${e.path}:${e.members}`).join(' ');
}

for (const dialect of dialects()) {
  test(`[${dialect}] console groups: created at the top and below, renamed, moved, deleted; refusals said on the page`, async () => {
    const ts = await setup(dialect);
    try {
      const jar = await signIn(ts, ADMIN);
      const list = await inject(ts.app, jar, 'GET', GROUPS);
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /<h1>Groups<\/h1>/);
      assert.match(list.body, /No groups yet/);
      const current = [...list.body.matchAll(/<a href="([^"]+)" aria-current="page">Groups<\/a>/g)].map((m) => m[1]);
      assert.deepEqual(current, [GROUPS], 'the navigation links the groups and marks them current');
      const csrf = /name="csrf" value="([^"]*)"/.exec(list.body)![1]!;

      // A top-level group, then one under it from the Groups page, and one from the parent's page.
      let res = await inject(ts.app, jar, 'POST', GROUPS, { csrf, name: 'eng', description: 'Engineering', parent: '' });
      assert.equal(res.statusCode, 303, res.body.slice(0, 300));
      const eng = idOf(res.headers.location);
      assert.equal(res.headers.location, `${GROUPS}/${eng}?done=group-created`);
      let page = await inject(ts.app, jar, 'GET', res.headers.location as string);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h1>\/eng<\/h1>/);
      assert.match(page.body, /class="notice"[^>]*>The group was created\.</);
      assert.match(page.body, /<dt>Description<\/dt><dd>Engineering<\/dd>/);
      res = await inject(ts.app, jar, 'POST', GROUPS, { csrf, name: 'backend', description: '', parent: eng });
      assert.equal(res.statusCode, 303);
      const backend = idOf(res.headers.location);
      page = await inject(ts.app, jar, 'GET', `${GROUPS}/${backend}`);
      assert.match(page.body, /<h1>\/eng\/backend<\/h1>/);
      assert.ok(page.body.includes(`<dt>Path</dt><dd>/<a href="${GROUPS}/${eng}">eng</a>/backend</dd>`), 'the path links the groups above');
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/children`, { csrf, name: 'frontend', description: 'Web' });
      assert.equal(res.statusCode, 303);
      const frontend = idOf(res.headers.location);
      assert.match((await inject(ts.app, jar, 'GET', res.headers.location as string)).body, /<h1>\/eng\/frontend<\/h1>/);

      // Refused on the Groups page, the form as typed: a name taken at the top, '/', a control character, blank, a parent that is gone.
      const refusals: Array<[Record<string, string>, RegExp]> = [
        [{ name: 'eng', parent: '' }, /Top level group named &#39;eng&#39; already exists\./],
        [{ name: 'backend', parent: eng }, /Sibling group named &#39;backend&#39; already exists\./],
        [{ name: 'a/b', parent: '' }, /must not contain &#39;\/&#39;/],
        [{ name: 'a\u0007b', parent: '' }, /control characters/],
        [{ name: '', parent: '' }, /non-empty/],
        [{ name: 'new', parent: 'no-such-group' }, /That parent group does not exist/],
      ];
      for (const [form, why] of refusals) {
        res = await inject(ts.app, jar, 'POST', GROUPS, { csrf, description: 'kept', ...form });
        assert.equal(res.statusCode, 400, form.name);
        assert.match(res.body, /class="error" role="alert"/, form.name);
        assert.match(res.body, why, form.name);
        assert.match(res.body, /id="groupDescription" name="description" autocomplete="off" value="kept"/, form.name);
      }
      // And on the parent's page, for a subgroup.
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/children`, { csrf, name: 'frontend', description: 'again' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /<h1>\/eng<\/h1>/);
      assert.match(res.body, /Sibling group named &#39;frontend&#39; already exists/);
      assert.match(res.body, /id="childDescription" name="description" autocomplete="off" value="again"/);
      assert.equal(await treeOf(ts), '/eng:0 /eng/backend:0 /eng/frontend:0');

      // The tree: nested lists in tree order, each with its member count.
      const tree = (await inject(ts.app, jar, 'GET', GROUPS)).body;
      assert.ok(
        tree.includes(`<ul class="group-tree"><li><a href="${GROUPS}/${eng}">eng</a> <span class="muted">0 members</span><ul class="group-tree"><li><a href="${GROUPS}/${backend}">backend</a> <span class="muted">0 members</span></li><li><a href="${GROUPS}/${frontend}">frontend</a>`),
        tree,
      );
      assert.ok(tree.includes(`<option value="${backend}">/eng/backend</option>`), 'the parent select names groups by path');

      // Renamed: the subgroups' paths follow; a name taken among the siblings is said, the form kept.
      res = await inject(ts.app, jar, 'POST', GROUPS, { csrf, name: 'ops', parent: '' });
      const ops = idOf(res.headers.location);
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${ops}/update`, { csrf, name: 'eng', description: 'Operations' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Top level group named &#39;eng&#39; already exists/);
      assert.match(res.body, /id="groupName" name="name" required autocomplete="off" value="eng"/);
      assert.match(res.body, /id="groupDescription" name="description" rows="3" autocomplete="off">Operations<\/textarea>/);
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/update`, { csrf, name: 'engineering', description: '' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${GROUPS}/${eng}?done=group-saved`);
      assert.equal((await ts.store.groups.get(eng))?.description, null, 'an empty description removes it');
      assert.match((await inject(ts.app, jar, 'GET', `${GROUPS}/${backend}`)).body, /<h1>\/engineering\/backend<\/h1>/);

      // Moved: to the top, and back; never under itself or below it (which the select does not offer either).
      const engPage = (await inject(ts.app, jar, 'GET', `${GROUPS}/${eng}`)).body;
      assert.ok(engPage.includes(`<option value="${ops}">/ops</option>`));
      assert.ok(!engPage.includes(`<option value="${frontend}"`), 'its own subgroups are no place to move it');
      assert.ok(!engPage.includes(`<option value="${eng}"`), 'nor itself');
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${backend}/move`, { csrf, parent: '' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${GROUPS}/${backend}?done=group-moved`);
      assert.match((await inject(ts.app, jar, 'GET', res.headers.location as string)).body, /<h1>\/backend<\/h1>[\s\S]*The group was moved/);
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${backend}/move`, { csrf, parent: eng });
      assert.equal(res.statusCode, 303);
      for (const [parent, why] of [[frontend, /cannot be moved under itself or one of its own subgroups/], [eng, /cannot be moved under itself/], ['no-such-group', /That group does not exist/]] as const) {
        res = await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/move`, { csrf, parent });
        assert.equal(res.statusCode, 400, parent);
        assert.match(res.body, why, parent);
      }
      // A sibling of the same name where it goes: a conflict, said on the page.
      await inject(ts.app, jar, 'POST', GROUPS, { csrf, name: 'backend', parent: ops });
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${backend}/move`, { csrf, parent: ops });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /Sibling group named &#39;backend&#39; already exists/);
      assert.equal(await treeOf(ts), '/engineering:0 /engineering/backend:0 /engineering/frontend:0 /ops:0 /ops/backend:0');

      // Deleting needs the name typed again; the subgroups go with it.
      page = await inject(ts.app, jar, 'GET', `${GROUPS}/${eng}`);
      assert.match(page.body, /Its 2 subgroups \(at any depth\) are deleted with it\./);
      for (const confirm of ['', 'engineerin', 'ENGINEERING']) {
        res = await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/delete`, { csrf, confirm });
        assert.equal(res.statusCode, 400, confirm);
        assert.match(res.body, /Type the group name/);
      }
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/delete`, { csrf, confirm: 'engineering' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${GROUPS}?done=group-deleted`);
      assert.match((await inject(ts.app, jar, 'GET', res.headers.location as string)).body, /The group and its subgroups were deleted/);
      assert.equal(await treeOf(ts), '/ops:0 /ops/backend:0');
      // A group that is gone: its page and its forms answer 404.
      assert.equal((await inject(ts.app, jar, 'GET', `${GROUPS}/${backend}`)).statusCode, 404);
      assert.equal((await inject(ts.app, jar, 'POST', `${GROUPS}/${eng}/update`, { csrf, name: 'x' })).statusCode, 404);
      assert.equal((await inject(ts.app, jar, 'POST', `${GROUPS}/${frontend}/children`, { csrf, name: 'x' })).statusCode, 404);
      // A group of another realm is not this realm's.
      const masterGroup = await createGroupAtPath(ts.store, { realmId: 'master', path: '/staff' }, BOOTSTRAP_ACTOR);
      assert.equal((await inject(ts.app, jar, 'GET', `${GROUPS}/${masterGroup.group.id}`)).statusCode, 404);
      assert.equal((await inject(ts.app, jar, 'POST', `${GROUPS}/${ops}/move`, { csrf, parent: masterGroup.group.id })).statusCode, 400);

      // A default group, set and unset on its page (manage-realm): every user created in between joins it.
      const opsUrl = `${GROUPS}/${ops}`;
      assert.match((await inject(ts.app, jar, 'GET', opsUrl)).body, /<dt>Default group<\/dt><dd>No<form[^>]*action="[^"]*\/default"/);
      const on = await inject(ts.app, jar, 'POST', `${opsUrl}/default`, { csrf, default: 'on' });
      assert.equal(on.statusCode, 303);
      assert.match((await inject(ts.app, jar, 'GET', String(on.headers.location))).body, /The group is a default group: every user created from now on joins it\.[\s\S]*<dt>Default group<\/dt><dd>Yes: every user created joins it/);
      assert.deepEqual((await ts.store.groups.defaults(REALM)).map((g) => g.id), [ops]);
      // Someone without manage-realm there (the viewer of master) may not change it.
      const viewer = await signIn(ts, VIEWER);
      assert.equal((await inject(ts.app, viewer, 'POST', `${opsUrl}/default`, { csrf: await csrfOf(ts, viewer, `${CONSOLE}/`), default: 'off' })).statusCode, 403);
      assert.equal((await inject(ts.app, jar, 'POST', `${opsUrl}/default`, { csrf, default: 'off' })).statusCode, 303);
      assert.deepEqual(await ts.store.groups.defaults(REALM), []);

      const events = await consoleEvents(ts);
      for (const e of [`CREATE GROUP groups/${eng}`, `CREATE GROUP groups/${frontend}`, `UPDATE GROUP groups/${eng}`, `UPDATE GROUP groups/${backend}`, `DELETE GROUP groups/${eng}`]) {
        assert.ok(events.includes(e), `${e} in ${events.join()}`);
      }
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console groups: members and role mappings; a parent's role reaches a subgroup member's token; a user's groups on their page`, async () => {
    const ts = await setup(dialect);
    try {
      const { group: eng } = await createGroupAtPath(ts.store, { realmId: REALM, path: '/eng' }, BOOTSTRAP_ACTOR);
      const { group: backend } = await createGroupAtPath(ts.store, { realmId: REALM, path: '/eng/backend' }, BOOTSTRAP_ACTOR);
      const staff = await createRole(ts.store, { realmId: REALM, clientId: '', name: 'staff' }, BOOTSTRAP_ACTOR);
      const reader = await createRole(ts.store, { realmId: REALM, clientId: ts.client.id, name: 'reader' }, BOOTSTRAP_ACTOR);
      const masterAdmin = (await ts.store.roles.find('master', '', 'admin'))!;
      const jar = await signIn(ts, ADMIN);
      const engUrl = `${GROUPS}/${eng.id}`;
      const backendUrl = `${GROUPS}/${backend.id}`;
      const csrf = await csrfOf(ts, jar, engUrl);

      // Roles mapped: a realm role to /eng, a client role to /eng/backend; the select offers the realm's roles and each client's.
      let page = await inject(ts.app, jar, 'GET', engUrl);
      assert.match(page.body, /<h2>Role mappings<\/h2>[\s\S]*No roles mapped\./);
      assert.ok(page.body.includes(`<optgroup label="Realm roles"><option value="${staff.id}">staff</option></optgroup>`));
      assert.ok(page.body.includes(`<optgroup label="Client ${ts.client.id}"><option value="${reader.id}">reader</option></optgroup>`));
      assert.doesNotMatch(page.body, /Inherited from the groups above/, 'a top-level group inherits nothing');
      let res = await inject(ts.app, jar, 'POST', `${engUrl}/roles`, { csrf, role: staff.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${engUrl}?done=group-role-mapped`);
      res = await inject(ts.app, jar, 'POST', `${backendUrl}/roles`, { csrf, role: reader.id });
      assert.equal(res.statusCode, 303);
      page = await inject(ts.app, jar, 'GET', `${backendUrl}?done=group-role-mapped`);
      assert.match(page.body, /The role was mapped to the group/);
      assert.match(page.body, new RegExp(`<li class="row"><span>reader <span class="muted">client role of ${ts.client.id}</span></span><form method="post" action="${backendUrl}/roles/remove"`));
      assert.match(page.body, /<h3>Inherited from the groups above<\/h3>\n<ul class="cards"><li><span>staff <span class="muted">realm role<\/span><\/span><\/li><\/ul>/);
      assert.doesNotMatch(page.body, new RegExp(`<option value="${reader.id}">`), 'a role mapped is not offered again');
      // Refused with the reason: no role, a role of another realm, an unknown id.
      for (const role of ['', masterAdmin.id, 'no-such-role']) {
        res = await inject(ts.app, jar, 'POST', `${backendUrl}/roles`, { csrf, role });
        assert.equal(res.statusCode, 400, role);
        assert.match(res.body, /class="error"[^>]*>That role does not exist/);
      }

      // alice, a member of the subgroup, carries both.
      assert.equal((await aliceClaims(ts)).realm_access, undefined);
      res = await inject(ts.app, jar, 'POST', `${backendUrl}/members`, { csrf, user: 'ALICE' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${backendUrl}?done=group-member-added`);
      page = await inject(ts.app, jar, 'GET', res.headers.location as string);
      assert.match(page.body, /The member was added/);
      assert.ok(page.body.includes(`<li class="row"><span><a href="${CONSOLE}/realms/${REALM}/users/${ts.user.id}">alice</a> <span class="muted">alice@example.com</span></span>`));
      assert.match(page.body, /<dt>Members<\/dt><dd>1<\/dd>/);
      assert.match((await inject(ts.app, jar, 'GET', GROUPS)).body, /backend<\/a> <span class="muted">1 member<\/span>/);
      let claims = await aliceClaims(ts);
      assert.deepEqual(claims.realm_access, { roles: ['staff'] });
      assert.deepEqual(claims.resource_access, { [ts.client.id]: { roles: ['reader'] } });
      // An unknown username is said on the page, the form as typed.
      res = await inject(ts.app, jar, 'POST', `${backendUrl}/members`, { csrf, user: 'nobody' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /class="error"[^>]*>user nobody does not exist in realm test/);
      assert.match(res.body, /id="member" name="user" required autocomplete="off" value="nobody"/);

      // Unmapped from the parent: gone from her next token.
      res = await inject(ts.app, jar, 'POST', `${engUrl}/roles/remove`, { csrf, role: staff.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${engUrl}?done=group-role-unmapped`);
      assert.equal((await aliceClaims(ts)).realm_access, undefined);
      // Removed from the subgroup: the client role goes too; removing her again is said.
      res = await inject(ts.app, jar, 'POST', `${backendUrl}/members/remove`, { csrf, user: ts.user.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${backendUrl}?done=group-member-removed`);
      assert.equal((await aliceClaims(ts)).resource_access, undefined);
      res = await inject(ts.app, jar, 'POST', `${backendUrl}/members/remove`, { csrf, user: ts.user.id });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /user alice is not a member of that group/);

      // Her groups on her page: joined from the list, left with the button.
      const userUrl = `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`;
      page = await inject(ts.app, jar, 'GET', userUrl);
      assert.match(page.body, /<h2>Groups<\/h2>\n<p class="muted">Not in any group\.<\/p>/);
      assert.ok(page.body.includes(`<select id="joinGroup" name="group" required><option value="${eng.id}">/eng</option><option value="${backend.id}">/eng/backend</option></select>`));
      res = await inject(ts.app, jar, 'POST', `${userUrl}/groups`, { csrf, group: backend.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=group-joined`);
      page = await inject(ts.app, jar, 'GET', res.headers.location as string);
      assert.match(page.body, /The user joined the group/);
      assert.ok(page.body.includes(`<li class="row"><a href="${backendUrl}">/eng/backend</a><form method="post" action="${userUrl}/groups/remove"`));
      assert.ok(!page.body.includes(`<option value="${backend.id}">`), 'a group joined is not offered again');
      assert.ok(page.body.includes(`<p>Roles through these groups and those above them: reader <span class="muted">(client role of ${ts.client.id})</span></p>`), 'the roles held through groups');
      assert.deepEqual((await aliceClaims(ts)).resource_access, { [ts.client.id]: { roles: ['reader'] } });
      for (const group of ['', 'no-such-group']) {
        res = await inject(ts.app, jar, 'POST', `${userUrl}/groups`, { csrf, group });
        assert.equal(res.statusCode, 400, group);
        assert.match(res.body, /<h1>alice<\/h1>[\s\S]*class="error"[^>]*>That group does not exist/);
      }
      res = await inject(ts.app, jar, 'POST', `${userUrl}/groups/remove`, { csrf, group: backend.id });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `${userUrl}?done=group-left`);
      assert.match((await inject(ts.app, jar, 'GET', res.headers.location as string)).body, /The user left the group/);
      res = await inject(ts.app, jar, 'POST', `${userUrl}/groups/remove`, { csrf, group: backend.id });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /is not a member of that group/);
      assert.equal((await aliceClaims(ts)).resource_access, undefined);
      // An unknown user: 404.
      assert.equal((await inject(ts.app, jar, 'POST', `${CONSOLE}/realms/${REALM}/users/nobody/groups`, { csrf, group: eng.id })).statusCode, 404);

      const events = await consoleEvents(ts);
      for (const e of [
        `CREATE REALM_ROLE_MAPPING groups/${eng.id}/role-mappings/realm`,
        `CREATE CLIENT_ROLE_MAPPING groups/${backend.id}/role-mappings/clients/${ts.client.id}`,
        `DELETE REALM_ROLE_MAPPING groups/${eng.id}/role-mappings/realm`,
        `CREATE GROUP_MEMBERSHIP users/${ts.user.id}/groups/${backend.id}`,
        `DELETE GROUP_MEMBERSHIP users/${ts.user.id}/groups/${backend.id}`,
      ]) {
        assert.ok(events.includes(e), `${e} in ${events.join()}`);
      }
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console groups: view-only admins see no forms, forged POSTs are refused; manage-users hands out no admin role through a group; CSRF`, async () => {
    const ts = await setup(dialect);
    try {
      // master: /admins holds realm-admin and has a member; /team holds a role of the realm's own; /team/sub has a member.
      const G = `${CONSOLE}/realms/master/groups`;
      const { id: opsId } = await createUser(ts.store, { realmId: 'master', username: 'ops1', password: 'ops password 42' });
      const { id: newId } = await createUser(ts.store, { realmId: 'master', username: 'newbie', password: 'newbie password 42' });
      const helpdesk = { username: 'helpdesk', password: 'helpdesk password 42' };
      const { id: helpdeskId } = await createUser(ts.store, { realmId: 'master', ...helpdesk });
      await grantRolesByName(ts.store, { realmId: 'master', userId: helpdeskId, clientId: 'realm-management', names: ['manage-users'] }, BOOTSTRAP_ACTOR);
      const support = await createRole(ts.store, { realmId: 'master', clientId: '', name: 'support' }, BOOTSTRAP_ACTOR);
      const realmAdmin = (await ts.store.roles.find('master', 'realm-management', 'realm-admin'))!;
      const viewUsers = (await ts.store.roles.find('master', 'realm-management', 'view-users'))!;
      const { group: admins } = await createGroupAtPath(ts.store, { realmId: 'master', path: '/admins' }, BOOTSTRAP_ACTOR);
      const { group: team } = await createGroupAtPath(ts.store, { realmId: 'master', path: '/team' }, BOOTSTRAP_ACTOR);
      const { group: sub } = await createGroupAtPath(ts.store, { realmId: 'master', path: '/team/sub' }, BOOTSTRAP_ACTOR);
      await changeGroupRoleMappings(ts.store, { realmId: 'master', groupId: admins.id, clientId: 'realm-management', roles: [{ id: realmAdmin.id }] }, BOOTSTRAP_ACTOR);
      await joinGroup(ts.store, { realmId: 'master', userId: opsId, groupId: admins.id }, BOOTSTRAP_ACTOR);
      await joinGroup(ts.store, { realmId: 'master', userId: newId, groupId: sub.id }, BOOTSTRAP_ACTOR);
      const opsUrl = `${CONSOLE}/realms/master/users/${opsId}`;
      const state = async (): Promise<unknown> => ({
        tree: await treeOf(ts, 'master'),
        admins: (await ts.store.groups.mappedRoles(admins.id)).map((r) => r.name),
        team: (await ts.store.groups.mappedRoles(team.id)).map((r) => r.name),
        ops: (await ts.store.groups.userGroups(opsId)).map((g) => g.name),
      });
      const initial = await state();

      // The viewer (view-users only) reads every page, with no form, and a forged change is refused.
      const viewer = await signIn(ts, VIEWER);
      for (const url of [G, `${G}/${admins.id}`, `${G}/${sub.id}`, opsUrl]) {
        const res = await inject(ts.app, viewer, 'GET', url);
        assert.equal(res.statusCode, 200, url);
        assert.doesNotMatch(res.body, /<form method="post" action="[^"]*\/(groups|members|roles|children|update|move|delete)["/]|>(Create group|Create subgroup|Save group|Move group|Delete group|Map role|Add member|Join group|Remove|Unmap|Remove from group)</, url);
      }
      assert.match((await inject(ts.app, viewer, 'GET', `${G}/${admins.id}`)).body, />ops1<\/a>/);
      assert.match((await inject(ts.app, viewer, 'GET', opsUrl)).body, new RegExp(`<li class="row"><a href="${G}/${admins.id}">/admins</a></li>`));
      const viewerCsrf = await csrfOf(ts, viewer, G);
      const forged: Array<[string, Record<string, string>]> = [
        [G, { name: 'mine', parent: '' }],
        [`${G}/${team.id}/children`, { name: 'mine' }],
        [`${G}/${team.id}/update`, { name: 'mine' }],
        [`${G}/${sub.id}/move`, { parent: '' }],
        [`${G}/${team.id}/delete`, { confirm: 'team' }],
        [`${G}/${team.id}/members`, { user: 'ops1' }],
        [`${G}/${admins.id}/members/remove`, { user: opsId }],
        [`${G}/${team.id}/roles`, { role: support.id }],
        [`${G}/${admins.id}/roles/remove`, { role: realmAdmin.id }],
        [`${opsUrl}/groups`, { group: team.id }],
        [`${opsUrl}/groups/remove`, { group: admins.id }],
      ];
      for (const [url, form] of forged) {
        const res = await inject(ts.app, viewer, 'POST', url, { csrf: viewerCsrf, ...form });
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /manage-users/, url);
      }
      // Nor may it see another realm's groups.
      assert.equal((await inject(ts.app, viewer, 'GET', GROUPS)).statusCode, 403);
      assert.deepEqual(await state(), initial);

      // helpdesk (manage-users): what hands out or takes away realm-admin through a group is refused, like mapping it to a user.
      const desk = await signIn(ts, helpdesk);
      const deskCsrf = await csrfOf(ts, desk, G);
      const denied: Array<[string, Record<string, string>]> = [
        [`${G}/${admins.id}/members`, { user: 'newbie' }],
        [`${G}/${admins.id}/members/remove`, { user: opsId }],
        [`${opsUrl}/groups/remove`, { group: admins.id }],
        [`${CONSOLE}/realms/master/users/${newId}/groups`, { group: admins.id }],
        [`${G}/${team.id}/roles`, { role: realmAdmin.id }],
        [`${G}/${admins.id}/roles/remove`, { role: realmAdmin.id }],
        // newbie, a member of /team/sub, would hold realm-admin below /admins.
        [`${G}/${sub.id}/move`, { parent: admins.id }],
        [`${G}/${admins.id}/delete`, { confirm: 'admins' }],
      ];
      for (const [url, form] of denied) {
        const res = await inject(ts.app, desk, 'POST', url, { csrf: deskCsrf, ...form });
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /Only an administrator holding realm-admin may grant or remove it/, url);
      }
      assert.deepEqual(await state(), initial);
      // The realm's own roles, and an admin role it holds (view-users, implied by manage-users): allowed.
      for (const role of [support.id, viewUsers.id]) {
        const res = await inject(ts.app, desk, 'POST', `${G}/${team.id}/roles`, { csrf: deskCsrf, role });
        assert.equal(res.statusCode, 303, role);
      }
      assert.equal((await inject(ts.app, desk, 'POST', `${G}/${team.id}/members`, { csrf: deskCsrf, user: 'ops1' })).statusCode, 303);
      assert.equal((await inject(ts.app, desk, 'POST', `${G}/${team.id}/move`, { csrf: deskCsrf, parent: '' })).statusCode, 303);
      assert.deepEqual((await ts.store.groups.mappedRoles(team.id)).map((r) => r.name).sort(), ['support', 'view-users']);
      // /admins made a default group: a user helpdesk creates would join it and administer the realm; refused, nobody created.
      await ts.store.groups.setDefault(admins.id, true);
      const created = await inject(ts.app, desk, 'POST', `${CONSOLE}/realms/master/users`, { csrf: deskCsrf, username: 'recruit', password: 'recruit password 42' });
      assert.equal(created.statusCode, 403);
      assert.match(created.body, /Only an administrator holding realm-admin may grant or remove it/);
      assert.equal(await ts.store.users.findByUsername('master', 'recruit'), undefined);
      await ts.store.groups.setDefault(admins.id, false);

      // The full admin, without the right CSRF token: refused, nothing changes.
      const admin = await signIn(ts, ADMIN);
      const other = await csrfOf(ts, await signIn(ts, ADMIN), G);
      const before = await state();
      const eventsBefore = (await consoleEvents(ts, 'master')).length;
      for (const token of [undefined, '', 'forged', other]) {
        const form: Record<string, string> = token === undefined ? {} : { csrf: token };
        for (const [url, fields] of forged) {
          const res = await inject(ts.app, admin, 'POST', url, { ...form, ...fields });
          assert.equal(res.statusCode, 403, `${url} ${String(token)}`);
          assert.match(res.body, /Form expired/);
        }
      }
      assert.deepEqual(await state(), before);
      assert.equal((await consoleEvents(ts, 'master')).length, eventsBefore);
    } finally {
      await ts.close();
    }
  });

  test(`[${dialect}] console groups: hostile names and descriptions are shown as text, invisible characters as escapes`, async () => {
    const ts = await setup(dialect);
    try {
      const script = '<script>alert(1)</script>';
      const img = '<img src=x onerror=alert(2)>"\'';
      const jar = await signIn(ts, ADMIN);
      const csrf = await csrfOf(ts, jar, GROUPS);
      // The script tag's name holds a '/': refused, said with the name escaped.
      let res = await inject(ts.app, jar, 'POST', GROUPS, { csrf, name: script, description: script, parent: '' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /must not contain/);
      assert.doesNotMatch(res.body, /<script>alert/);
      assert.ok(res.body.includes('value="&lt;script&gt;alert(1)&lt;/script&gt;"'));
      res = await inject(ts.app, jar, 'POST', GROUPS, { csrf, name: img, description: script, parent: '' });
      assert.equal(res.statusCode, 303);
      const hostile = idOf(res.headers.location);
      // '..' is a name like any other: the URL names the group by id.
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${hostile}/children`, { csrf, name: '..' });
      assert.equal(res.statusCode, 303);
      const dots = idOf(res.headers.location);
      assert.match((await inject(ts.app, jar, 'GET', `${GROUPS}/${dots}`)).body, /<h1>\/&lt;img src=x onerror=alert\(2\)&gt;&quot;&#39;\/\.\.<\/h1>/);
      // As a database may hold them all the same (an import, the API, by hand): a bidi override, a bell, a line break.
      await ts.store.groups.create({ id: 'g-bidi', realmId: REALM, parentId: '', name: 'invoice\u202egpj.exe', description: 'ring\u0007\nsecond line', attributes: {} }, 0);
      await ts.store.groups.create({ id: 'g-lines', realmId: REALM, parentId: 'g-bidi', name: 'two\nlines', description: null, attributes: {} }, 0);
      for (const id of [hostile, 'g-lines']) {
        res = await inject(ts.app, jar, 'POST', `${CONSOLE}/realms/${REALM}/users/${ts.user.id}/groups`, { csrf, group: id });
        assert.equal(res.statusCode, 303, id);
      }
      const pages = [GROUPS, `${GROUPS}/${hostile}`, `${GROUPS}/${dots}`, `${GROUPS}/g-bidi`, `${GROUPS}/g-lines`, `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`, `${CONSOLE}/realms/${REALM}/events`];
      for (const url of pages) {
        const page = await inject(ts.app, jar, 'GET', url);
        assert.equal(page.statusCode, 200, url);
        assert.doesNotMatch(page.body, /<script>alert|<img src=x/, url);
        // Shown escaped; kept as they are only where a form sends them back (the rename field).
        const shown = page.body.replace(/ value="[^"]*"/g, '').replace(/<textarea[^>]*>[^<]*<\/textarea>/g, '');
        assert.doesNotMatch(shown, /\u202e|\u0007|two\nlines/, url);
      }
      const hostilePage = (await inject(ts.app, jar, 'GET', `${GROUPS}/${hostile}`)).body;
      assert.ok(hostilePage.includes('<h1>/&lt;img src=x onerror=alert(2)&gt;&quot;&#39;</h1>'));
      assert.ok(hostilePage.includes('<dt>Description</dt><dd>&lt;script&gt;alert(1)&lt;/script&gt;</dd>'));
      assert.ok(hostilePage.includes('id="groupName" name="name" required autocomplete="off" value="&lt;img src=x onerror=alert(2)&gt;&quot;&#39;"'));
      assert.ok(hostilePage.includes('rows="3" autocomplete="off">&lt;script&gt;alert(1)&lt;/script&gt;</textarea>'));
      const bidi = (await inject(ts.app, jar, 'GET', `${GROUPS}/g-bidi`)).body;
      assert.ok(bidi.includes('<dt>Name</dt><dd>invoice\\u{202e}gpj.exe</dd>'));
      assert.ok(bidi.includes('<dt>Description</dt><dd>ring\\x07\nsecond line</dd>'), 'a description keeps its lines');
      const user = (await inject(ts.app, jar, 'GET', `${CONSOLE}/realms/${REALM}/users/${ts.user.id}`)).body;
      assert.ok(user.includes(`<a href="${GROUPS}/g-lines">/invoice\\u{202e}gpj.exe/two\\nlines</a>`));
      assert.ok(user.includes(`<a href="${GROUPS}/${hostile}">/&lt;img src=x onerror=alert(2)&gt;&quot;&#39;</a>`));
      const tree = (await inject(ts.app, jar, 'GET', GROUPS)).body;
      assert.ok(tree.includes(`<option value="g-lines">/invoice\\u{202e}gpj.exe/two\\nlines</option>`));
      // A refused rename comes back in the message and the form, escaped.
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${dots}/update`, { csrf, name: '<b>x</b>/y' });
      assert.equal(res.statusCode, 400);
      assert.doesNotMatch(res.body, /<b>x<\/b>/);
      assert.ok(res.body.includes('value="&lt;b&gt;x&lt;/b&gt;/y"'));
      // Deleted by its name typed again, hostile as it is.
      res = await inject(ts.app, jar, 'POST', `${GROUPS}/${hostile}/delete`, { csrf, confirm: img });
      assert.equal(res.statusCode, 303);
      assert.equal(await ts.store.groups.get(dots), undefined);
    } finally {
      await ts.close();
    }
  });
}
