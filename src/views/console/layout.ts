import { html, type SafeHtml } from '../html.js';
import { STYLESHEET_PATH } from '../layout.js';

export const CONSOLE_BASE = '/auth/admin/console';

export function realmBase(realmId: string): string {
  return `${CONSOLE_BASE}/realms/${encodeURIComponent(realmId)}`;
}

export interface ConsoleFrame {
  title: string;
  /** The signed-in admin's name, shown in the header. */
  admin: string;
  csrf: string;
  /** The realm being administered, for the realm navigation. */
  realmId?: string;
  notice?: string;
  error?: string;
  /** The realm section shown, marked as the current page in the navigation. */
  section?: string;
}

const SECTIONS = [
  ['', 'Overview'],
  ['/clients', 'Clients'],
  ['/users', 'Users'],
  ['/groups', 'Groups'],
  ['/roles', 'Roles'],
  ['/organizations', 'Organizations'],
  ['/identity-providers', 'Identity providers'],
  ['/user-federation', 'User federation'],
  ['/events', 'Events'],
] as const;

/** A console page: a header with the admin and sign-out, the realm's navigation, one main region. */
export function consolePage(frame: ConsoleFrame, body: SafeHtml): string {
  const realmId = frame.realmId;
  const nav = realmId
    ? html`<nav aria-label="Realm"><ul class="console-nav">${SECTIONS.map(
        ([path, label]) => html`<li><a href="${realmBase(realmId)}${path}"${frame.section === path ? html` aria-current="page"` : ''}>${label}</a></li>`,
      )}</ul></nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${frame.title} · Realmgate admin</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body class="console">
<header class="console-header">
<a class="console-brand" href="${CONSOLE_BASE}/">Realmgate admin</a>
<form method="post" action="${CONSOLE_BASE}/logout" class="console-signout">
<input type="hidden" name="csrf" value="${frame.csrf}">
<span class="muted">${frame.admin}</span> <button type="submit" class="secondary">Sign out</button>
</form>
</header>
${nav}
<main class="card console-main">
${frame.realmId ? html`<p class="realm">Realm ${frame.realmId}</p>` : ''}
<h1>${frame.title}</h1>
${frame.notice ? html`<p class="notice" role="status">${frame.notice}</p>` : ''}
${frame.error ? html`<p class="error" role="alert">${frame.error}</p>` : ''}
${body}
</main>
</body>
</html>
`.value;
}

/** A hidden CSRF field and a one-button form (POST), for the many small actions. */
export function actionForm(action: string, csrf: string, label: string, opts: { secondary?: boolean; fields?: Record<string, string> } = {}): SafeHtml {
  const fields = Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${action}" class="inline-form"><input type="hidden" name="csrf" value="${csrf}">${fields}<button type="submit"${opts.secondary ? html` class="secondary"` : ''}>${label}</button></form>`;
}

export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}
