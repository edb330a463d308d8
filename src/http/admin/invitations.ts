import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { MailError } from '../../mail/mailer.js';
import { deleteInvitation, inviteExistingUser, inviteUser, listInvitations, requireInvitation, resendInvitation, toInvitationRepresentation } from '../../admin/operations/invitations.js';
import { NotFound } from '../../admin/validation.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { AdminHttpError } from './errors.js';
import { multipartFields } from './form-fields.js';
import { noContent204, params, security } from './schemas.js';

const tags = ['organizations'];
const orgParams = params({ id: { type: 'string', maxLength: 64 } });
const invitationParams = params({ id: { type: 'string', maxLength: 64 }, invitationId: { type: 'string', maxLength: 64 } });
const text = { type: 'string', maxLength: 320 } as const;
const query = {
  type: 'object',
  properties: { first: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0, maximum: 1000 }, status: { type: 'string', enum: ['PENDING', 'EXPIRED'] }, email: text, search: text, firstName: text, lastName: text },
} as const;
interface Query {
  first?: number;
  max?: number;
  status?: 'PENDING' | 'EXPIRED';
  email?: string;
  search?: string;
  firstName?: string;
  lastName?: string;
}

/** A form field of the body: multipart (keycloak-admin-client's FormData), urlencoded, or a JSON object. */
function formField(req: FastifyRequest, name: string): string | undefined {
  const body = req.body;
  const fields = typeof body === 'string' ? multipartFields(body, req.headers['content-type']) : body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const v = fields[name];
  return typeof v === 'string' ? v : undefined;
}

/** Keycloak answers 500 "Failed to send invite email"; the mail server's failure is not ours: 502, with the reason. */
async function mailing<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof MailError) throw new AdminHttpError(502, 'HTTP 502 Bad Gateway', `Failed to send invite email: ${err.message}`);
    throw err;
  }
}

/**
 * Keycloak 26's organization invitations: inviting needs manage-realm and manage-users (it makes a member,
 * as adding one does), reading them view-users. The link's secret is never answered: only the mail has it.
 */
export async function invitationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, body));

  async function realmFor(req: FastifyRequest<{ Params: { realm: string } }>, roles: Array<'view-users' | 'manage-users' | 'manage-realm'>): Promise<{ realmId: string; caller: ReturnType<typeof callerOf> }> {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    for (const role of roles) requireRole(caller, realm.id, role);
    return { realmId: realm.id, caller };
  }
  /** The organization by id only, as the API names it (the operations also take an alias). */
  async function orgId(realmId: string, id: string): Promise<string> {
    const org = await services.store.organizationAdmin.get(id);
    if (!org || org.realmId !== realmId) throw new NotFound('Organization not found');
    return org.id;
  }
  const manage: Array<'manage-users' | 'manage-realm'> = ['manage-realm', 'manage-users'];

  app.post<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id/members/invite-user',
    { schema: { tags, summary: 'Invite by email (form fields email, firstName, lastName): an existing user is asked to accept, a new one to register', params: orgParams, response: noContent204, security } },
    async (req, reply) => {
      const { realmId, caller } = await realmFor(req, manage);
      const organization = await orgId(realmId, req.params.id);
      const email = formField(req, 'email');
      const firstName = formField(req, 'firstName');
      const lastName = formField(req, 'lastName');
      await mailing(() => inviteUser(services, { realmId, organization, ...(email !== undefined ? { email } : {}), ...(firstName !== undefined ? { firstName } : {}), ...(lastName !== undefined ? { lastName } : {}), log: req.log }, actorOf(caller)));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { realm: string; id: string } }>(
    '/realms/:realm/organizations/:id/members/invite-existing-user',
    { schema: { tags, summary: "Invite an existing user (form field id) to the email they have", params: orgParams, response: noContent204, security } },
    async (req, reply) => {
      const { realmId, caller } = await realmFor(req, manage);
      const organization = await orgId(realmId, req.params.id);
      const id = formField(req, 'id');
      await mailing(() => inviteExistingUser(services, { realmId, organization, ...(id !== undefined ? { user: id } : {}), log: req.log }, actorOf(caller)));
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { realm: string; id: string }; Querystring: Query }>(
    '/realms/:realm/organizations/:id/invitations',
    { schema: { tags, summary: 'The invitations of an organization (status PENDING or EXPIRED; email, search, firstName, lastName)', params: orgParams, querystring: query, security } },
    async (req) => {
      const { realmId } = await realmFor(req, ['view-users']);
      const organization = await orgId(realmId, req.params.id);
      const list = await listInvitations(services, { realmId, organization, ...req.query, max: req.query.max ?? 100 });
      const now = nowSeconds(services.clock);
      return list.map((i) => toInvitationRepresentation(i, now));
    },
  );

  app.get<{ Params: { realm: string; id: string; invitationId: string } }>(
    '/realms/:realm/organizations/:id/invitations/:invitationId',
    { schema: { tags, summary: 'An invitation', params: invitationParams, security } },
    async (req) => {
      const { realmId } = await realmFor(req, ['view-users']);
      const { inv } = await requireInvitation(services.store, { realmId, organization: await orgId(realmId, req.params.id), invitation: req.params.invitationId });
      return toInvitationRepresentation(inv, nowSeconds(services.clock));
    },
  );

  app.post<{ Params: { realm: string; id: string; invitationId: string } }>(
    '/realms/:realm/organizations/:id/invitations/:invitationId/resend',
    { schema: { tags, summary: 'Resend an invitation: a new one with a new link replaces it (the old link stops working)', params: invitationParams, response: noContent204, security } },
    async (req, reply) => {
      const { realmId, caller } = await realmFor(req, manage);
      const organization = await orgId(realmId, req.params.id);
      await mailing(() => resendInvitation(services, { realmId, organization, invitation: req.params.invitationId, log: req.log }, actorOf(caller)));
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { realm: string; id: string; invitationId: string } }>(
    '/realms/:realm/organizations/:id/invitations/:invitationId',
    { schema: { tags, summary: 'Delete an invitation: its link stops working', params: invitationParams, response: noContent204, security } },
    async (req, reply) => {
      const { realmId, caller } = await realmFor(req, manage);
      await deleteInvitation(services, { realmId, organization: await orgId(realmId, req.params.id), invitation: req.params.invitationId }, actorOf(caller));
      return reply.code(204).send();
    },
  );
}
