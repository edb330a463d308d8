import { html, type SafeHtml } from './html.js';
import { currentTranslator, t, type Text } from '../i18n/translator.js';

export const STYLESHEET_PATH = '/auth/resources/realmgate.css';

/**
 * A page in the current translator's language (src/i18n/translator.ts withTranslator): its `lang`, and
 * when the realm offers several languages a menu of them (Keycloak's kc_locale links).
 */
export function page(opts: { title: Text; realmName: string; body: SafeHtml; script?: string; wide?: boolean }): string {
  const tr = currentTranslator();
  const menu = tr.menu;
  return html`<!doctype html>
<html lang="${tr.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${t('pageTitle', String(opts.title), opts.realmName)}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${opts.script ? html`<script src="${opts.script}" defer></script>` : ''}
</head>
<body>
<main class="card${opts.wide ? ' wide' : ''}">
${menu ? html`<nav class="locales" aria-label="${t('languageMenu')}">${menu.locales.map((l) => (l.tag === tr.locale ? html`<span lang="${l.tag}" aria-current="true">${l.name}</span>` : html`<a href="${l.href}" lang="${l.tag}" hreflang="${l.tag}">${l.name}</a>`))}</nav>
` : ''}<p class="realm">${opts.realmName}</p>
${opts.body}
</main>
</body>
</html>
`.value;
}
