import { html, type SafeHtml } from '../html.js';
import type { InitialAccess } from '../../storage/repos/client-registration.js';
import { actionForm, consolePage, csrfField, realmBase, type ConsoleFrame } from './layout.js';
import { when } from './pages.js';

export function initialAccessUrl(realmId: string): string {
  return `${realmBase(realmId)}/clients-initial-access`;
}

export interface InitialAccessView {
  tokens: InitialAccess[];
  /** The realm's RFC 7591 registration endpoint, handed over with a token. */
  endpoint: string;
  canManage: boolean;
  /** The token just created: on the answer to the create only, never in a URL. */
  created?: { access: InitialAccess; token: string };
  /** What was typed into the create form, when it was refused. */
  form?: Record<string, string>;
}

const LABELS = ['ID', 'Created', 'Expires', 'Count', 'Remaining', ''] as const;

function tokenRow(realmId: string, csrf: string, a: InitialAccess, canManage: boolean): SafeHtml {
  const cells: Array<SafeHtml | string> = [html`<code>${a.id}</code>`, when(a.createdAt), a.expiresAt === 0 ? 'never' : when(a.expiresAt), String(a.count), String(a.remaining)];
  if (canManage) cells.push(actionForm(`${initialAccessUrl(realmId)}/${encodeURIComponent(a.id)}/delete`, csrf, 'Delete', { secondary: true }));
  return html`<tr>${cells.map((c, i) => html`<td data-label="${LABELS[i] ?? ''}">${c}</td>`)}</tr>`;
}

/** The token just made, once: the operator copies it with the endpoint and hands both over. */
function createdBox(created: { access: InitialAccess; token: string }): SafeHtml {
  const { access, token } = created;
  const limits = `It may register ${access.count} client${access.count === 1 ? '' : 's'}${access.expiresAt === 0 ? ' and does not expire' : ` until ${when(access.expiresAt)}`}.`;
  return html`<div class="notice" role="status">
<p><strong>The initial access token, shown only now: copy it now; it will not be shown again.</strong> Only its hash is stored. ${limits}</p>
<p><code class="secret" id="initial-access-token">${token}</code></p>
<p class="muted">Hand it over with the registration endpoint above: a client is registered with a POST of its metadata as JSON (RFC 7591) to the endpoint, with the header <code>Authorization: Bearer</code> and this token.</p>
</div>`;
}

/**
 * Client registration (Keycloak's "Initial access token" tab): the realm's initial access tokens that can
 * still register a client, the form making one and each one's delete button (manage-clients).
 */
export function initialAccessPage(frame: ConsoleFrame & { realmId: string }, view: InitialAccessView): string {
  const { realmId, csrf } = frame;
  const form = view.form ?? {};
  const head = LABELS.slice(0, view.canManage ? 6 : 5).map((l) => (l ? html`<th scope="col">${l}</th>` : html`<th scope="col"><span class="visually-hidden">Actions</span></th>`));
  const table =
    view.tokens.length === 0
      ? html`<p class="muted">No initial access tokens that can still register a client.</p>`
      : html`<div class="table-wrap"><table><caption class="visually-hidden">Initial access tokens</caption><thead><tr>${head}</tr></thead><tbody>${view.tokens.map((a) => tokenRow(realmId, csrf, a, view.canManage))}</tbody></table></div>`;
  const create = view.canManage
    ? html`<h2>Create an initial access token</h2>
<form method="post" action="${initialAccessUrl(realmId)}" class="console-form">${csrfField(csrf)}
<label for="expiration">Expiration (seconds; 0: never)</label><input type="text" inputmode="numeric" pattern="[0-9]*" id="expiration" name="expiration" required autocomplete="off" value="${form.expiration ?? '86400'}">
<label for="count">Count (clients it may register)</label><input type="text" inputmode="numeric" pattern="[0-9]*" id="count" name="count" required autocomplete="off" value="${form.count ?? '1'}">
<button type="submit">Create initial access token</button></form>`
    : '';
  return consolePage(
    frame,
    html`<p><a href="${realmBase(realmId)}/clients">Back to the clients</a></p>
<p class="muted">The bearer of an initial access token may register clients at the realm's client registration endpoint (RFC 7591) until it expires or has registered its count of clients. Hand the token and the endpoint to a developer or a deployment script.</p>
<dl class="facts"><dt>Registration endpoint</dt><dd><code>${view.endpoint}</code></dd></dl>
${view.created ? createdBox(view.created) : ''}
<h2>Tokens</h2>
${table}
${create}`,
  );
}
