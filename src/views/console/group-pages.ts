import { html, type SafeHtml } from '../html.js';
import type { User } from '../../storage/types.js';
import type { Role } from '../../storage/repos/roles.js';
import type { Group } from '../../storage/repos/groups.js';
import type { GroupTreeEntry } from '../../admin/operations/groups.js';
import { actionForm, consolePage, csrfField, realmBase, type ConsoleFrame } from './layout.js';

// Characters a name may hold (written by an import, the API or by hand) that HTML escaping leaves as they
// are, yet which no one can see or which reorder the text around them (bidi overrides, "Trojan Source"):
// C0 and C1 controls, DEL, the line and paragraph separators, the Unicode bidi controls (UAX #9).
const HIDDEN = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
// The same in a description, which may run over several lines (tabs and line breaks are its text).
const HIDDEN_IN_TEXT = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A name as the console shows it: each invisible or reordering character as a visible escape (\x07, \u{202e}); the html tag escapes the rest. */
export function visible(text: string, opts: { multiline?: boolean } = {}): string {
  return text.replace(opts.multiline ? HIDDEN_IN_TEXT : HIDDEN, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

export function groupUrl(realmId: string, id: string): string {
  return `${realmBase(realmId)}/groups/${encodeURIComponent(id)}`;
}

function memberCount(n: number): string {
  return n === 1 ? '1 member' : `${n} members`;
}

function roleKind(r: Role): string {
  return r.clientId ? `client role of ${r.clientId}` : 'realm role';
}

/** Roles to choose from, in one optgroup per container: the realm's roles, then each client's (in the order given). */
export function roleOptions(roles: Role[]): SafeHtml[] {
  const groups: Array<{ label: string; roles: Role[] }> = [];
  for (const r of roles) {
    const label = r.clientId ? `Client ${r.clientId}` : 'Realm roles';
    if (groups.at(-1)?.label !== label) groups.push({ label, roles: [] });
    groups.at(-1)!.roles.push(r);
  }
  return groups.map((g) => html`<optgroup label="${g.label}">${g.roles.map((r) => html`<option value="${r.id}">${r.name}</option>`)}</optgroup>`);
}

/** Groups to choose from, by path, in tree order; `selected` is preselected. */
function groupOptions(entries: Array<{ group: Group; path: string }>, selected?: string): SafeHtml[] {
  return entries.map((e) => html`<option value="${e.group.id}"${e.group.id === selected ? html` selected` : ''}>${visible(e.path)}</option>`);
}

/** The tree as nested lists: each group links to its page, with its number of direct members. */
function treeHtml(realmId: string, tree: GroupTreeEntry[]): SafeHtml {
  const byParent = new Map<string, GroupTreeEntry[]>();
  for (const e of tree) {
    const siblings = byParent.get(e.group.parentId);
    if (siblings) siblings.push(e);
    else byParent.set(e.group.parentId, [e]);
  }
  const level = (parentId: string): SafeHtml =>
    html`<ul class="group-tree">${(byParent.get(parentId) ?? []).map(
      (e) => html`<li><a href="${groupUrl(realmId, e.group.id)}">${visible(e.group.name)}</a> <span class="muted">${memberCount(e.members)}</span>${byParent.has(e.group.id) ? level(e.group.id) : ''}</li>`,
    )}</ul>`;
  return level('');
}

/** The Groups page: the realm's tree with member counts, and (manage-users) the form creating a group at the top or under one. */
export function groupsPage(frame: ConsoleFrame & { realmId: string }, tree: GroupTreeEntry[], canManage: boolean, form: Record<string, string> = {}): string {
  const base = `${realmBase(frame.realmId)}/groups`;
  const create = canManage
    ? html`<h2>Create a group</h2>
<form method="post" action="${base}" class="console-form">${csrfField(frame.csrf)}
<label for="groupName">Group name</label><input type="text" id="groupName" name="name" required autocomplete="off" value="${form.name ?? ''}">
<label for="groupDescription">Description (optional)</label><input type="text" id="groupDescription" name="description" autocomplete="off" value="${form.description ?? ''}">
<label for="groupParent">Parent group</label><select id="groupParent" name="parent"><option value="">None (a top-level group)</option>${groupOptions(tree, form.parent)}</select>
<button type="submit">Create group</button></form>`
    : '';
  return consolePage(
    frame,
    html`<p class="muted">The members of a group hold the roles mapped to it and to every group above it; their access tokens carry them. Add members and map roles on a group's page.</p>
${tree.length === 0 ? html`<p class="muted">No groups yet.</p>` : treeHtml(frame.realmId, tree)}${create}`,
  );
}

/** What a group's page shows: the group, the groups above it, its subgroups, members (a page), roles, and where it may move. */
export interface GroupPageData {
  group: Group;
  /** From its top-level group down to its parent. */
  ancestors: Group[];
  subgroups: GroupTreeEntry[];
  /** Its subgroups at any depth, deleted with it. */
  descendants: number;
  members: User[];
  memberCount: number;
  roles: { granted: Role[]; inherited: Role[]; available: Role[] };
  /** The groups it may be moved under (not itself, nor one below it). */
  moveTargets: GroupTreeEntry[];
  /** One of the realm's default groups (every user created joins it). */
  isDefault: boolean;
  /** The admin may change that (manage-realm). */
  canSetDefault: boolean;
}

/**
 * A group's page: path (its ancestors linked), members (add by username, remove), role mappings (map from
 * a list, unmap) and the roles it inherits (read only), subgroups (create one), and the forms renaming,
 * moving and deleting it (its name typed again). Without manage-users, no forms.
 */
export function groupPage(frame: ConsoleFrame & { realmId: string }, d: GroupPageData, canManage: boolean, form: Record<string, string> = {}): string {
  const realmId = frame.realmId;
  const base = groupUrl(realmId, d.group.id);
  const path = [...d.ancestors.map((a) => html`<a href="${groupUrl(realmId, a.id)}">${visible(a.name)}</a>`), html`${visible(d.group.name)}`].map((p) => html`/${p}`);

  const memberItems = d.members.map(
    (u) =>
      html`<li class="row"><span><a href="${realmBase(realmId)}/users/${encodeURIComponent(u.id)}">${u.username}</a>${u.email ? html` <span class="muted">${u.email}</span>` : ''}</span>${canManage ? actionForm(`${base}/members/remove`, frame.csrf, 'Remove', { secondary: true, fields: { user: u.id } }) : ''}</li>`,
  );
  const members = html`<h2>Members</h2>
${d.members.length === 0 ? html`<p class="muted">No members yet.</p>` : html`<ul class="cards">${memberItems}</ul>`}
${d.members.length < d.memberCount ? html`<p class="muted">The first ${d.members.length} of ${d.memberCount}, by username.</p>` : ''}
${canManage
  ? html`<form method="post" action="${base}/members" class="console-form">${csrfField(frame.csrf)}<label for="member">Add a member (username)</label><input type="text" id="member" name="user" required autocomplete="off" value="${form.user ?? ''}"><button type="submit">Add member</button></form>`
  : ''}`;

  const granted = d.roles.granted.map(
    (r) => html`<li class="row"><span>${r.name} <span class="muted">${roleKind(r)}</span></span>${canManage ? actionForm(`${base}/roles/remove`, frame.csrf, 'Unmap', { secondary: true, fields: { role: r.id } }) : ''}</li>`,
  );
  const inherited = d.roles.inherited.map((r) => html`<li><span>${r.name} <span class="muted">${roleKind(r)}</span></span></li>`);
  const roles = html`<h2>Role mappings</h2>
<p class="muted">Its members, and the members of its subgroups, hold these roles: their access tokens carry them.</p>
${d.roles.granted.length === 0 ? html`<p class="muted">No roles mapped.</p>` : html`<ul class="cards">${granted}</ul>`}
${canManage && d.roles.available.length > 0
  ? html`<form method="post" action="${base}/roles" class="console-form">${csrfField(frame.csrf)}<label for="mapRole">Map a role</label><select id="mapRole" name="role" required>${roleOptions(d.roles.available)}</select><button type="submit">Map role</button></form>`
  : ''}
${d.ancestors.length === 0
  ? ''
  : html`<h3>Inherited from the groups above</h3>
${d.roles.inherited.length === 0
  ? html`<p class="muted">None.</p>`
  : html`<ul class="cards">${inherited}</ul><p class="muted">Mapped to a group above this one: change them on that group's page.</p>`}`}`;

  const subgroupItems = d.subgroups.map((e) => html`<li><a href="${groupUrl(realmId, e.group.id)}">${visible(e.group.name)}</a> <span class="muted">${memberCount(e.members)}</span></li>`);
  const subgroups = html`<h2>Subgroups</h2>
${d.subgroups.length === 0 ? html`<p class="muted">No subgroups.</p>` : html`<ul class="group-tree">${subgroupItems}</ul>`}
${canManage
  ? html`<form method="post" action="${base}/children" class="console-form">${csrfField(frame.csrf)}
<label for="childName">Subgroup name</label><input type="text" id="childName" name="name" required autocomplete="off" value="${form.childName ?? ''}">
<label for="childDescription">Description (optional)</label><input type="text" id="childDescription" name="description" autocomplete="off" value="${form.childDescription ?? ''}">
<button type="submit">Create subgroup</button></form>`
  : ''}`;

  const consequence =
    d.descendants === 0
      ? 'Its members stay users but lose the roles they held through it.'
      : `${d.descendants === 1 ? 'Its subgroup is' : `Its ${d.descendants} subgroups (at any depth) are`} deleted with it. The members of all of them stay users but lose the roles they held through them.`;
  const manage = canManage
    ? html`<h2>Edit</h2>
<form method="post" action="${base}/update" class="console-form">${csrfField(frame.csrf)}
<label for="groupName">Group name</label><input type="text" id="groupName" name="name" required autocomplete="off" value="${form.name ?? d.group.name}">
<label for="groupDescription">Description</label><textarea id="groupDescription" name="description" rows="3" autocomplete="off">${form.description ?? d.group.description ?? ''}</textarea>
<button type="submit">Save group</button></form>
<h2>Move</h2>
<form method="post" action="${base}/move" class="console-form">${csrfField(frame.csrf)}
<label for="moveParent">Parent group</label><select id="moveParent" name="parent"><option value="">None (a top-level group)</option>${groupOptions(d.moveTargets, d.group.parentId)}</select>
<p class="muted">Its subgroups and members move with it; the members then hold the roles of the groups above it there, and no longer those of the groups above it here.</p>
<button type="submit">Move group</button></form>
<h2>Delete</h2>
<form method="post" action="${base}/delete" class="console-form">${csrfField(frame.csrf)}
<label for="confirm">Type the group name to delete the group</label><input type="text" id="confirm" name="confirm" required autocomplete="off">
<p class="muted">${consequence} This cannot be undone.</p>
<button type="submit" class="danger">Delete group</button></form>`
    : '';

  const defaultForm = d.canSetDefault
    ? actionForm(`${base}/default`, frame.csrf, d.isDefault ? 'No longer a default group' : 'Make it a default group', { secondary: true, fields: { default: d.isDefault ? 'off' : 'on' } })
    : '';
  return consolePage(
    frame,
    html`<dl class="facts">
<dt>Name</dt><dd>${visible(d.group.name)}</dd>
<dt>Path</dt><dd>${path}</dd>
<dt>Description</dt><dd>${visible(d.group.description ?? '', { multiline: true })}</dd>
<dt>Members</dt><dd>${d.memberCount}</dd>
<dt>Subgroups</dt><dd>${d.subgroups.length}</dd>
<dt>Default group</dt><dd>${d.isDefault ? 'Yes: every user created joins it' : 'No'}${defaultForm}</dd>
</dl>
${members}${roles}${subgroups}${manage}`,
  );
}

/** A user's groups on the user's page: each by path, with a button taking the user out (manage-users), and a list of the others to join. */
export function userGroupsSection(
  csrf: string,
  realmId: string,
  userBase: string,
  groups: { joined: Array<{ group: Group; path: string }>; roles: Role[]; available: Array<{ group: Group; path: string }> },
  canManage: boolean,
): SafeHtml {
  const held = groups.roles.map((r, i) => html`${i > 0 ? ', ' : ''}${r.name} <span class="muted">(${roleKind(r)})</span>`);
  const items = groups.joined.map(
    (g) =>
      html`<li class="row"><a href="${groupUrl(realmId, g.group.id)}">${visible(g.path)}</a>${canManage ? actionForm(`${userBase}/groups/remove`, csrf, 'Remove from group', { secondary: true, fields: { group: g.group.id } }) : ''}</li>`,
  );
  return html`<h2>Groups</h2>
${groups.joined.length === 0
  ? html`<p class="muted">Not in any group.</p>`
  : html`<ul class="cards">${items}</ul>
<p>${groups.roles.length === 0 ? html`<span class="muted">No roles through these groups.</span>` : html`Roles through these groups and those above them: ${held}`}</p>`}
${canManage && groups.available.length > 0
  ? html`<form method="post" action="${userBase}/groups" class="console-form">${csrfField(csrf)}<label for="joinGroup">Add to a group</label><select id="joinGroup" name="group" required>${groupOptions(groups.available)}</select>
<p class="muted">The user's next access token carries the group's roles and those of the groups above it.</p><button type="submit">Join group</button></form>`
  : ''}`;
}
