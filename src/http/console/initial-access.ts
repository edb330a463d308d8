import type { FastifyInstance, FastifyReply } from 'fastify';
import { hasAdminRole } from '../../admin/authorization.js';
import { createInitialAccess, deleteInitialAccess, listInitialAccess } from '../../admin/operations/initial-access.js';
import type { InitialAccess } from '../../storage/repos/client-registration.js';
import { NotFound } from '../../admin/validation.js';
import { initialAccessPage, initialAccessUrl } from '../../views/console/initial-access-pages.js';
import { registrationEndpoint } from '../client-registration/registration.js';
import { sendPage } from '../interaction/render.js';
import { CONSOLE_PATH } from './session.js';
import { field, isRefusal, type ConsoleKit, type Req, type Signed } from './common.js';

/** Outcomes a redirect of this page may announce (routes.ts adds them to its fixed set). */
export const INITIAL_ACCESS_NOTICES: Record<string, string> = {
  'initial-access-deleted': 'The initial access token was deleted: it registers no more clients (those it registered stay).',
};

interface Shown {
  status?: number;
  error?: string;
  notice?: string;
  created?: { access: InitialAccess; token: string };
  form?: Record<string, string>;
}

/** A whole number as typed (digits only, at most 10 of them); the operation checks its range. */
function wholeNumber(value: string): number | undefined {
  return /^[0-9]{1,10}$/.test(value) ? Number(value) : undefined;
}

/**
 * Client initial access tokens in the console (Keycloak's Clients > Initial access token), as the admin
 * API decides for them: view-clients to list, manage-clients to create and delete. A token is shown once,
 * in the page answering the POST that made it (no-store, as every console page): never in a URL.
 */
export function initialAccessRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { services, signedIn, realmOf, need } = kit;
  const store = services.store;
  const R = `${CONSOLE_PATH}/realms/:realm/clients-initial-access`;

  async function clientsRealm(s: Signed, req: Req, level: 'view' | 'manage'): Promise<string> {
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, level === 'view' ? 'view-clients' : 'manage-clients');
    return realmId;
  }

  async function show(s: Signed, reply: FastifyReply, realmId: string, opts: Shown = {}): Promise<FastifyReply> {
    // A page under Clients: that section is the current one in the navigation.
    const frame = { ...s.frame, title: 'Initial access tokens', realmId, section: '/clients', ...(opts.error ? { error: opts.error } : {}), ...(opts.notice ? { notice: opts.notice } : {}) };
    const view = {
      tokens: await listInitialAccess(store, realmId),
      endpoint: registrationEndpoint(services, realmId),
      canManage: hasAdminRole(s.caller, realmId, 'manage-clients'),
      ...(opts.created ? { created: opts.created } : {}),
      ...(opts.form ? { form: opts.form } : {}),
    };
    return sendPage(reply, opts.status ?? 200, initialAccessPage(frame, view));
  }

  app.get(R, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    return show(s, reply, await clientsRealm(s, req, 'view'));
  });

  app.post(R, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await clientsRealm(s, req, 'manage');
    const form = { expiration: field(req, 'expiration'), count: field(req, 'count') };
    const expiration = wholeNumber(form.expiration);
    const count = wholeNumber(form.count);
    if (expiration === undefined) return show(s, reply, realmId, { status: 400, error: 'Expiration: enter a whole number of seconds (0: never).', form });
    if (count === undefined) return show(s, reply, realmId, { status: 400, error: 'Count: enter a whole number of clients (at least 1).', form });
    let created: { access: InitialAccess; token: string };
    try {
      created = await createInitialAccess(store, { realmId, expiration, count }, s.actor);
    } catch (err) {
      if (isRefusal(err)) return show(s, reply, realmId, { status: 400, error: err.message, form });
      throw err;
    }
    // The token is in this answer only (stored as its hash): a redirect would have to carry it in its URL.
    return show(s, reply, realmId, { status: 201, notice: 'The initial access token was created.', created });
  });

  app.post(`${R}/:id/delete`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await clientsRealm(s, req, 'manage');
    try {
      await deleteInitialAccess(store, { realmId, id: req.params.id! }, s.actor);
    } catch (err) {
      // Deleted in another tab, used up or expired and collected: said on the list, not a bare 404 page.
      if (err instanceof NotFound) return show(s, reply, realmId, { status: 404, error: 'That initial access token does not exist any more.' });
      throw err;
    }
    return reply.redirect(`${initialAccessUrl(realmId)}?done=initial-access-deleted`, 303);
  });
}
