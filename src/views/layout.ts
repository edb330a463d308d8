import { html, type SafeHtml } from './html.js';

export const STYLESHEET_PATH = '/auth/resources/realmgate.css';

export function page(opts: { title: string; realmName: string; body: SafeHtml; script?: string; wide?: boolean }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${opts.title} · ${opts.realmName}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${opts.script ? html`<script src="${opts.script}" defer></script>` : ''}
</head>
<body>
<main class="card${opts.wide ? ' wide' : ''}">
<p class="realm">${opts.realmName}</p>
${opts.body}
</main>
</body>
</html>
`.value;
}
