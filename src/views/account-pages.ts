import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import type { PasswordRule } from './pages.js';

export interface AccountGrant {
  clientId: string;
  clientName: string;
  organizationId: string;
  organizationName: string;
  scopes: Array<{ name: string; consentText: string }>;
  since: number;
  lastUsed: number | undefined;
}

export interface AccountSession {
  id: string;
  createdAt: number;
  current: boolean;
}

/** A moment as `<time>`, e.g. 2025-01-31 14:05 UTC (kept on one line by the stylesheet). */
function when(seconds: number): SafeHtml {
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso.slice(0, 19)}Z">${iso.replace('T', ' ').slice(0, 16)} UTC</time>`;
}

/** An authenticator app (or a security key) of the user, as the account page lists it. */
export interface AccountAuthenticator {
  id: string;
  label: string | null;
  createdAt: number;
  /** A security key that signs in alone (a passkey). */
  passwordless?: boolean;
}

/** The user's account at an identity provider, as the account page lists it. */
export interface AccountLink {
  alias: string;
  providerName: string;
  username: string;
  createdAt: number;
  /** The user's only way in (no password, no other link): not removable. */
  last: boolean;
}

export function accountPage(ctx: {
  realmName: string;
  username: string;
  base: string;
  csrf: string;
  grants: AccountGrant[];
  sessions: AccountSession[];
  authenticators: AccountAuthenticator[];
  /** The user's security keys (WebAuthn), listed as the apps are. */
  securityKeys: AccountAuthenticator[];
  links: AccountLink[];
  /** False for a user made by an identity provider: no password to change. */
  hasPassword: boolean;
  /** The realm's password rule, shown before the user types. */
  passwordRule: PasswordRule;
  /** Unused recovery codes of the user. */
  recoveryCodesLeft: number;
  notice?: string;
  /** Why the password form was refused (shown by it). */
  passwordError?: string;
}): string {
  return page({
    title: 'Your account',
    realmName: ctx.realmName,
    wide: true,
    body: html`<h1>Your account</h1>
<p class="muted">Signed in as <strong>${ctx.username}</strong>.</p>
${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : ''}
<h2>Applications with access</h2>
${ctx.grants.length === 0
  ? html`<p class="muted">No application has access to your account.</p>`
  : html`<ul class="cards">
${ctx.grants.map(
  (g) => html`<li class="grant">
<div><strong>${g.clientName}</strong>${g.organizationId === '' ? '' : html` <span class="muted">for ${g.organizationName}</span>`}</div>
<ul class="scopes">${g.scopes.map((s) => html`<li>${s.consentText}</li>`)}</ul>
<p class="muted">Allowed since ${when(g.since)}. ${g.lastUsed ? html`Last used ${when(g.lastUsed)}.` : html`Not used since.`}</p>
<form method="post" action="${ctx.base}/revoke">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="client_id" value="${g.clientId}">
<input type="hidden" name="organization_id" value="${g.organizationId}">
<button type="submit" class="secondary">Revoke access</button>
</form>
</li>`,
)}
</ul>`}
<h2>Password</h2>
${ctx.hasPassword
  ? html`${ctx.passwordError ? html`<p class="error" role="alert">${ctx.passwordError}</p>` : ''}
<form method="post" action="${ctx.base}/password" class="password-form">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="text" name="username" value="${ctx.username}" autocomplete="username" readonly hidden>
<label for="password-current">Current password</label>
<input type="password" id="password-current" name="password" autocomplete="current-password" maxlength="1024" required>
<label for="password-new">New password</label>
<input type="password" id="password-new" name="password-new" autocomplete="new-password" minlength="${ctx.passwordRule.min}" maxlength="${ctx.passwordRule.max}" aria-describedby="password-rule" required>
<label for="password-confirm">Confirm new password</label>
<input type="password" id="password-confirm" name="password-confirm" autocomplete="new-password" minlength="${ctx.passwordRule.min}" maxlength="${ctx.passwordRule.max}" required>
<p class="muted" id="password-rule">${ctx.passwordRule.text} Your other browsers and applications will be signed out.</p>
<div class="actions"><button type="submit" class="secondary">Change password</button></div>
</form>`
  : html`<p class="muted">You have no password here: you sign in with your linked account. An administrator can set one for you.</p>`}
${ctx.hasPassword || ctx.authenticators.length > 0 || ctx.securityKeys.length > 0
  ? html`<h2>Two-step sign-in</h2>
${ctx.authenticators.length === 0
  ? ctx.securityKeys.length === 0
    ? html`<p class="muted">Only your password protects your account. With an authenticator app, signing in also asks for the code it shows.</p>`
    : html`<p class="muted">No authenticator app: signing in asks for your security key after your password. An app can be a second way in.</p>`
  : html`<ul class="cards">
${ctx.authenticators.map(
  (a) => html`<li class="authenticator">
<div><strong>${a.label ?? 'Authenticator app'}</strong> <span class="muted">set up ${when(a.createdAt)}</span></div>
<form method="post" action="${ctx.base}/otp/remove">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="credential_id" value="${a.id}">
<button type="submit" class="secondary">Remove</button>
</form>
</li>`,
)}
</ul>`}
${ctx.authenticators.length > 0
  ? html`<p class="muted">Recovery codes, to sign in if you lose your phone: ${ctx.recoveryCodesLeft === 0 ? 'none yet.' : html`${ctx.recoveryCodesLeft} left.`}</p>
<form method="post" action="${ctx.base}/recovery-codes">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" class="secondary">${ctx.recoveryCodesLeft === 0 ? 'Create recovery codes' : 'Create new recovery codes'}</button></div>
</form>`
  : ''}
<form method="post" action="${ctx.base}/otp/setup">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions">${ctx.authenticators.length === 0 ? html`<button type="submit">Set up an authenticator app</button>` : html`<button type="submit" class="secondary">Add another authenticator app</button>`}</div>
</form>
<h2>Security keys</h2>
${ctx.securityKeys.length === 0
  ? html`<p class="muted">No security key yet. A USB, NFC or Bluetooth key, or this device's screen lock, can be your second step instead of a code.</p>`
  : html`<ul class="cards">
${ctx.securityKeys.map(
  (k) => html`<li class="authenticator">
<div><strong>${k.label ?? (k.passwordless ? 'Passkey' : 'Security key')}</strong>${k.passwordless ? ' (passkey)' : ''} <span class="muted">added ${when(k.createdAt)}</span></div>
<form method="post" action="${ctx.base}/webauthn/remove">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="credential_id" value="${k.id}">
<button type="submit" class="secondary">Remove</button>
</form>
</li>`,
)}
</ul>`}
<form method="post" action="${ctx.base}/webauthn/setup">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<div class="actions"><button type="submit" class="secondary">Add a security key</button></div>
</form>
`
  : ''}
${ctx.links.length > 0
  ? html`<h2>Linked accounts</h2>
<ul class="cards">
${ctx.links.map(
  (l) => html`<li class="linked-account">
<div><strong>${l.providerName}</strong> <span class="muted">as ${l.username}, linked ${when(l.createdAt)}</span></div>
${l.last
  ? html`<p class="muted">Your only way to sign in here, so it stays linked.</p>`
  : html`<form method="post" action="${ctx.base}/linked-accounts/remove">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="provider" value="${l.alias}">
<button type="submit" class="secondary">Unlink</button>
</form>`}
</li>`,
)}
</ul>`
  : ''}
<h2>Where you are signed in</h2>
<ul class="cards">
${ctx.sessions.map(
  (s) => html`<li class="session">
<div>${s.current ? html`<strong>This browser</strong>` : 'Another browser'} <span class="muted">since ${when(s.createdAt)}</span></div>
<form method="post" action="${ctx.base}/sessions/end">
<input type="hidden" name="csrf" value="${ctx.csrf}">
<input type="hidden" name="session_id" value="${s.id}">
<button type="submit" class="secondary">Sign out</button>
</form>
</li>`,
)}
</ul>`,
  });
}

/** The user's new recovery codes, shown once: to print or write down. */
export function recoveryCodesPage(ctx: { realmName: string; username: string; base: string; codes: readonly string[] }): string {
  return page({
    title: 'Recovery codes',
    realmName: ctx.realmName,
    body: html`<h1>Your recovery codes</h1>
<p>Keep these codes somewhere safe, apart from your phone: print them or write them down. If you lose your phone, each signs <strong>${ctx.username}</strong> in once instead of the app's code. They are shown only now; any earlier codes no longer work.</p>
<ol class="recovery-codes">
${ctx.codes.map((c) => html`<li><code>${c}</code></li>`)}
</ol>
<div class="actions"><a href="${ctx.base}">Back to your account</a></div>`,
  });
}
