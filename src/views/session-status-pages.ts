import { html } from './html.js';

/**
 * The invisible pages keycloak-js frames: no content, one same-origin script each. They use no
 * layout or stylesheet: nobody sees them.
 */
export function scriptOnlyPage(title: string, script: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<script src="${script}"></script>
</head>
<body></body>
</html>
`.value;
}
