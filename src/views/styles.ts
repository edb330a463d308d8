// Served at STYLESHEET_PATH (a same-origin stylesheet, so the CSP can forbid inline styles).
export const STYLESHEET = `
:root { color-scheme: light; --accent: #1f5fbf; --accent-dark: #174a96; --text: #1c2430; --muted: #5b6675; --border: #d5dbe3; --control-border: #858f9e; --error: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; align-items: flex-start; justify-content: center; background: #f3f5f8; color: var(--text); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.card { width: 100%; max-width: 28rem; margin: 8vh 1rem 2rem; padding: 2rem; background: #fff; border: 1px solid var(--border); border-radius: 12px; box-shadow: 0 2px 12px rgba(20, 30, 50, 0.06); }
.locales { display: flex; flex-wrap: wrap; justify-content: flex-end; gap: 0.25rem 0.75rem; margin: 0 0 0.5rem; font-size: 0.85rem; }
.locales span { font-weight: 600; }
.realm { margin: 0 0 0.25rem; color: var(--muted); font-size: 0.85rem; text-transform: uppercase; letter-spacing: 0.06em; }
h1 { margin: 0 0 1rem; font-size: 1.5rem; line-height: 1.25; }
p { margin: 0 0 1rem; }
label { display: block; margin: 0 0 0.25rem; font-weight: 600; }
input[type=text], input[type=password], input[type=email], select { width: 100%; padding: 0.6rem 0.75rem; margin: 0 0 1rem; font: inherit; color: inherit; border: 1px solid var(--control-border); border-radius: 8px; }
select { background: #fff; }
input[readonly] { background: #eef1f5; color: var(--muted); border-style: dashed; cursor: default; }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
input[type=radio], input[type=checkbox] { accent-color: var(--accent); }
label.check { display: flex; gap: 0.5rem; align-items: center; font-weight: 400; margin: -0.25rem 0 0; }
.card > :last-child, .card form > :last-child { margin-bottom: 0; }
button { font: inherit; font-weight: 600; padding: 0.6rem 1.2rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button:hover { background: var(--accent-dark); }
a.button { display: inline-block; font-weight: 600; padding: 0.6rem 1.2rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; text-decoration: none; }
a.button:hover { background: var(--accent-dark); }
.logout-clients { margin: 0 0 1rem; padding-left: 1.25rem; overflow-wrap: anywhere; }
iframe.logout-frame { position: absolute; width: 0; height: 0; border: 0; visibility: hidden; }
button.secondary { background: #fff; color: var(--accent); }
button.secondary:hover { background: #eef3fb; }
button.danger { background: var(--error); border-color: var(--error); }
button.danger:hover { background: #8c1d17; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; justify-content: flex-end; align-items: center; margin-top: 1.5rem; }
.actions a.forgot, .actions a.back { margin-right: auto; }
.error { padding: 0.75rem 1rem; margin: 0 0 1rem; border-radius: 8px; background: #fdecea; color: var(--error); border: 1px solid #f3c0bb; }
.permissions { list-style: none; padding: 0; margin: 0 0 1rem; border: 1px solid var(--border); border-radius: 8px; }
.permissions li { padding: 0.65rem 1rem; border-top: 1px solid var(--border); }
.permissions li:first-child { border-top: 0; }
.permissions .scope { display: block; color: var(--muted); font-size: 0.8rem; font-family: ui-monospace, monospace; }
.resources { margin: 0 0 1rem; padding-left: 1.25rem; font-family: ui-monospace, monospace; font-size: 0.85rem; overflow-wrap: anywhere; }
fieldset { border: 1px solid var(--border); border-radius: 8px; padding: 0.5rem 1rem; margin: 0 0 1rem; }
legend { font-weight: 600; padding: 0 0.25rem; }
.choice { display: flex; align-items: center; gap: 0.6rem; padding: 0.45rem 0; font-weight: 400; }
.choice input { flex: none; width: 1.1rem; height: 1.1rem; margin: 0; }
.muted { color: var(--muted); font-size: 0.9rem; }
a { color: var(--accent); }
.card.wide { max-width: 40rem; }
h2 { margin: 1.5rem 0 0.75rem; font-size: 1.15rem; }
.notice { padding: 0.75rem 1rem; border-radius: 8px; background: #e8f3ec; color: #1d5b34; border: 1px solid #b9dcc6; }
.cards { list-style: none; padding: 0; margin: 0; }
.cards > li { border: 1px solid var(--border); border-radius: 8px; padding: 0.75rem 1rem; margin: 0 0 0.75rem; }
.cards form { margin: 0.5rem 0 0; }
.cards .scopes { margin: 0.5rem 0; padding-left: 1.2rem; }
.session, .authenticator, .linked-account { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 0.5rem 1rem; }
.session form, .authenticator form, .linked-account form { margin: 0; }
.linked-account p { margin: 0; }
.session .muted, .authenticator .muted, .linked-account .muted { display: block; }
.cards button, .cards time { white-space: nowrap; }
.code-row { display: flex; gap: 0.5rem; align-items: stretch; margin: 0 0 0.5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.code:disabled { color: var(--muted); text-decoration: line-through; }
button:disabled { opacity: 0.5; cursor: not-allowed; }
input.code, textarea.code { flex: 1; min-width: 0; width: 100%; padding: 0.75rem; text-align: center; letter-spacing: 0.04em; font: 600 1.15rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; border: 1px solid var(--border); border-radius: 8px; background: #f7f9fc; }
.error > p:last-child { margin-bottom: 0; }
.error ul { margin: 0; padding-left: 1.25rem; }
.register { margin: 1.25rem 0 0; text-align: center; }
.other-method { margin: 1rem 0 0; text-align: center; }
button.link { background: none; border: 0; padding: 0; color: var(--accent); font-weight: 400; text-decoration: underline; }
button.link:hover { background: none; color: var(--accent-dark); }
.card:has(.code-row) { max-width: 38rem; }
.steps { padding-left: 1.25rem; margin: 0 0 1rem; }
.steps li { margin: 0 0 0.75rem; }
.qr-box { margin: 0.75rem 0; }
.qr { display: block; width: 12.5rem; height: auto; max-width: 100%; border: 1px solid var(--border); border-radius: 8px; }
.key code { font: 600 1rem/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; letter-spacing: 0.05em; overflow-wrap: anywhere; }
.terms { max-height: 22rem; overflow-y: auto; padding: 0.75rem 1rem; margin: 0 0 1rem; border: 1px solid var(--border); border-radius: 8px; background: #f7f9fc; overflow-wrap: anywhere; }
.terms p { margin: 0 0 0.75rem; }
.terms p:last-child { margin: 0; }
.recovery-codes { columns: 2; column-gap: 2rem; padding-left: 1.75rem; margin: 0 0 1rem; }
.recovery-codes code { font: 600 1rem/1.9 ui-monospace, SFMono-Regular, Menlo, monospace; letter-spacing: 0.04em; white-space: nowrap; }
form + details { margin: 1.25rem 0 0; }
.providers { margin: 1.5rem 0 0; display: flex; flex-direction: column; gap: 0.5rem; }
.providers button { width: 100%; }
.or { display: flex; align-items: center; gap: 0.75rem; margin: 0 0 0.5rem; color: var(--muted); font-size: 0.9rem; }
.or::before, .or::after { content: ""; flex: 1; border-top: 1px solid var(--border); }
@media (max-width: 30rem) { .recovery-codes { columns: 1; } }
textarea.code { display: block; resize: none; overflow: hidden; field-sizing: content; word-break: break-all; overflow-wrap: anywhere; }
.code-row .code { margin: 0; padding: 0.75rem 0.5rem; font-size: 1rem; letter-spacing: 0; }
/* The admin console (src/views/console): a header, the realm's navigation, one wide card. */
body.console { display: block; }
.console-header { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; justify-content: space-between; padding: 0.75rem 1rem; background: #fff; border-bottom: 1px solid var(--border); }
.console-brand { font-weight: 700; text-decoration: none; color: var(--text); }
.console-signout { display: flex; align-items: center; gap: 0.75rem; margin: 0; }
.console-signout button { padding: 0.35rem 0.9rem; }
.console-nav { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; list-style: none; max-width: 64rem; margin: 1rem auto 0; padding: 0 1rem; }
.console-nav a { display: inline-block; padding: 0.35rem 0; font-weight: 600; }
.console-nav a[aria-current=page] { color: var(--text); text-decoration-thickness: 3px; text-underline-offset: 0.35em; }
.card.console-main { max-width: 64rem; margin: 1rem auto 2rem; }
@media (max-width: 66rem) { .card.console-main { margin: 1rem 0.5rem 2rem; width: auto; padding: 1.25rem; } }
.console-form { max-width: 32rem; }
.console-form button { margin-top: 0.25rem; }
.console-form details { margin: 0 0 0.75rem; }
.console-form summary { cursor: pointer; font-weight: 600; color: var(--accent); }
.console-form details[open] > summary { margin: 0 0 0.75rem; }
.console-search .row input { margin: 0; flex: 1; min-width: 0; }
.row { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0 0 1rem; }
.cards > li.row { justify-content: space-between; margin-bottom: 0.5rem; }
.cards > li.row > form { margin: 0; }
.inline-form { margin: 0; display: inline-block; }
.cards code, .facts code { overflow-wrap: anywhere; }
.secret { font-size: 1rem; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
th, td { text-align: left; padding: 0.5rem 0.6rem; border-bottom: 1px solid var(--border); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td code { font-size: 0.85rem; overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.4rem 1.25rem; margin: 0 0 1rem; }
.facts dt { font-weight: 600; color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
h3 { margin: 1.25rem 0 0.5rem; font-size: 1rem; }
.console-form textarea { display: block; width: 100%; padding: 0.6rem 0.75rem; margin: 0 0 1rem; font: inherit; color: inherit; border: 1px solid var(--control-border); border-radius: 8px; resize: vertical; }
.console-form textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
/* A tree of groups: nested lists, each level indented along a rule. */
.group-tree { list-style: none; margin: 0 0 1rem; padding: 0; }
.group-tree .group-tree { margin: 0.25rem 0 0 0.4rem; padding-left: 1rem; border-left: 2px solid var(--border); }
.group-tree li { margin: 0.3rem 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  /* Narrow screens: each table row becomes a small card of "column: value" lines. */
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap td { display: block; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .table-wrap tr { border: 1px solid var(--border); border-radius: 8px; padding: 0.4rem 0.75rem; margin: 0 0 0.5rem; }
  .table-wrap td { display: grid; grid-template-columns: 6.5rem 1fr; gap: 0.5rem; border: 0; padding: 0.15rem 0; overflow-wrap: anywhere; }
  .table-wrap td::before { content: attr(data-label); color: var(--muted); font-weight: 600; }
}
@media (max-width: 30rem) {
  /* Facts whose values are long URLs: each value under its name, the full width. */
  .facts.long-values { grid-template-columns: 1fr; gap: 0; }
  .facts.long-values dd { margin: 0 0 0.5rem; }
  .code-row { flex-wrap: wrap; }
  .code-row .code { flex-basis: 100%; }
  .code-row button { flex: 1 1 auto; }
}
`;
