import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { html } from '../../views/html.js';
import { page } from '../../views/layout.js';
import { sendPage } from '../interaction/render.js';

/**
 * `{APP_URL}/authentication_code`: where clients with limited web server access send the user, who
 * copies the code by hand (specification, E1). Served here when APP_URL is this server.
 */
export async function appPageRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const appPath = new URL(opts.services.config.appUrl).pathname.replace(/\/$/, '');
  app.get<{ Querystring: Record<string, unknown> }>(`${appPath}/authentication_code`, async (req, reply) => {
    const q = req.query;
    const code = typeof q.code === 'string' ? q.code : undefined;
    const error = typeof q.error === 'string' ? q.error : undefined;
    const description = typeof q.error_description === 'string' ? q.error_description : undefined;
    const body = code
      ? html`<h1>Your authorization code</h1>
<p>Copy this code into the application that asked for it. It works once and expires in less than a minute.</p>
<p><input type="text" id="code" readonly value="${code}" aria-label="Authorization code" class="code"></p>`
      : html`<h1>Authorization did not complete</h1>
<p class="error" role="alert">${error === 'access_denied' ? 'Access was denied.' : `The request failed${error ? `: ${error}` : ''}.`} ${description ?? ''}</p>
<p class="muted">Go back to the application and start again.</p>`;
    reply.header('referrer-policy', 'no-referrer');
    return sendPage(reply, code ? 200 : 400, page({ title: code ? 'Authorization code' : 'Authorization failed', realmName: 'Realmgate', body }));
  });
}
