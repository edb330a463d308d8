import { html, type SafeHtml } from '../html.js';
import type { UserStorageProvider } from '../../storage/types.js';
import { consolePage, csrfField, realmBase, type ConsoleFrame } from './layout.js';
import { visible } from './group-pages.js';
import { describeMapper } from '../../oauth/ldap/mapper-config.js';

export function federationUrl(realmId: string): string {
  return `${realmBase(realmId)}/user-federation`;
}

const first = (p: UserStorageProvider, k: string): string => p.config[k]?.[0] ?? '';
const enabled = (p: UserStorageProvider): boolean => first(p, 'enabled') !== 'false';

const textField = (id: string, label: string, value: string, opts: { required?: boolean; help?: string } = {}): SafeHtml =>
  html`<label for="${id}">${label}</label><input type="text" id="${id}" name="${id}" autocomplete="off"${opts.required ? html` required` : ''} value="${value}">${opts.help ? html`<p class="muted">${opts.help}</p>` : ''}`;

/** One provider: its settings, and (manage-realm) enable or disable, test, delete. */
function providerSection(realmId: string, csrf: string, p: UserStorageProvider, canManage: boolean): SafeHtml {
  const base = `${federationUrl(realmId)}/${encodeURIComponent(p.id)}`;
  const rows: Array<[string, string]> = [
    ['State', enabled(p) ? 'enabled' : 'disabled'],
    ['Connection URL', first(p, 'connectionUrl') + (first(p, 'startTls') === 'true' ? ' (StartTLS)' : '')],
    ['Users DN', first(p, 'usersDn')],
    ['Search scope', first(p, 'searchScope') === '2' ? 'subtree' : 'one level'],
    ['Bind', first(p, 'authType') === 'none' ? 'anonymous' : `${first(p, 'bindDn')} (password set, not shown)`],
    ['Username attribute', first(p, 'usernameLDAPAttribute')],
    ['UUID attribute', first(p, 'uuidLDAPAttribute')],
    ['Object classes', first(p, 'userObjectClasses')],
    ['Edit mode', `${first(p, 'editMode')}${first(p, 'editMode') === 'WRITABLE' ? ' (password changes are written to the directory)' : ' (passwords are changed in the directory only)'}`],
  ];
  const actions = canManage
    ? html`<div class="actions">
<form method="post" action="${base}/test">${csrfField(csrf)}<button type="submit">Test connection and bind</button></form>
<form method="post" action="${base}/${enabled(p) ? 'disable' : 'enable'}">${csrfField(csrf)}<button type="submit">${enabled(p) ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="${base}/delete">${csrfField(csrf)}<label for="confirm-${p.id}">Type the name to delete it</label><input type="text" id="confirm-${p.id}" name="confirm" autocomplete="off"><button type="submit" class="danger">Delete</button></form>
</div>`
    : '';
  return html`<section aria-labelledby="p-${p.id}"><h2 id="p-${p.id}">${visible(p.name)}</h2>
<dl class="settings">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${visible(v)}</dd>`)}</dl>
<h3>Mappers</h3>
<ul class="mappers">${p.mappers.map((m) => html`<li><strong>${visible(m.name)}</strong> <span class="muted">${m.providerId}</span>: ${visible(describeMapper(m))}</li>`)}</ul>
${actions}</section>`;
}

/** The realm's LDAP providers and the form adding one (manage-realm). */
export function userFederationPage(frame: ConsoleFrame & { realmId: string }, providers: UserStorageProvider[], canManage: boolean, form: Record<string, string> = {}): string {
  const scope = form.searchScope ?? '1';
  const add = canManage
    ? html`<h2>Add an LDAP provider</h2>
<form method="post" action="${federationUrl(frame.realmId)}" class="console-form">${csrfField(frame.csrf)}
${textField('name', 'Name', form.name ?? '', { required: true })}
${textField('connectionUrl', 'Connection URL', form.connectionUrl ?? '', { required: true, help: 'ldap://host:port or ldaps://host:port. Certificates are verified; a private CA is trusted with NODE_EXTRA_CA_CERTS at the server start.' })}
<label class="choice" for="startTls"><input type="checkbox" id="startTls" name="startTls" value="on"${form.startTls === 'on' ? html` checked` : ''}> StartTLS (for an ldap:// URL)</label>
${textField('usersDn', 'Users DN', form.usersDn ?? '', { required: true, help: 'Where users are searched, e.g. ou=People,dc=example,dc=org.' })}
<label for="searchScope">Search scope</label><select id="searchScope" name="searchScope"><option value="1"${scope === '1' ? html` selected` : ''}>One level</option><option value="2"${scope === '2' ? html` selected` : ''}>Subtree</option></select>
${textField('bindDn', 'Bind DN', form.bindDn ?? '', { help: 'The service account the search binds as; leave empty to search anonymously.' })}
<label for="bindCredential">Bind password</label><input type="password" id="bindCredential" name="bindCredential" autocomplete="new-password">
${textField('usernameLDAPAttribute', 'Username attribute', form.usernameLDAPAttribute ?? 'uid', { help: 'uid; sAMAccountName for Active Directory.' })}
${textField('uuidLDAPAttribute', 'UUID attribute', form.uuidLDAPAttribute ?? 'entryUUID', { help: 'entryUUID; objectGUID for Active Directory.' })}
${textField('userObjectClasses', 'User object classes', form.userObjectClasses ?? 'inetOrgPerson, organizationalPerson')}
<button type="submit">Add provider</button></form>`
    : '';
  return consolePage(
    frame,
    html`<p class="muted">Users sign in with their LDAP or Active Directory password (Keycloak's user federation): a name not found here is looked up in the directory and checked by a bind; the user is then imported, without a password. Profiles are only read from the directory; a new password is written to it only under edit mode WRITABLE.</p>
${providers.length === 0 ? html`<p class="muted">No LDAP providers yet.</p>` : providers.map((p) => providerSection(frame.realmId, frame.csrf, p, canManage))}
${add}`,
  );
}
