import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { ConflictError, type Realm, type User } from '../../storage/types.js';
import type { Invitation } from '../../storage/repos/invitations.js';
import type { OrganizationDetails } from '../../storage/repos/organization-admin.js';
import { nowSeconds } from '../../clock.js';
import { createBrowserSession, sessionOrigin } from '../../oauth/authorize/interaction.js';
import { acceptInvitation, invitationOfLink } from '../../admin/operations/invitations.js';
import { createUser } from '../../admin/operations/users.js';
import { LIMITS, ValidationError } from '../../admin/validation.js';
import { localizedRule } from '../../views/password-rule.js';
import { browserSession, checkFormCsrf, ensureBrowserBinding, formCsrf, setRealmCookie, setSessionCookies } from '../cookies.js';
import { invitationPage } from '../../views/invitation-pages.js';
import { linkRefusedPage } from '../../views/reset-pages.js';
import { registerPage, type RegistrationValues } from '../../views/registration-pages.js';
import { htmlErrorHandler, renderError, sendPage } from './render.js';
import { BAD_FORM, FORM_EXPIRED } from './routes.js';
import { useTranslator } from '../i18n.js';
import { msg, type Text } from '../../i18n/translator.js';
import { registrationProblems } from './registration-routes.js';

/**
 * The cookie that brings a user who had to sign in first back to the invitation (src/http/account/routes.ts
 * reads it after the account page's sign-in): the link's key, for half an hour, HttpOnly and realm-scoped.
 */
export const INVITATION_COOKIE = 'RG_INVITATION';
const INVITATION_COOKIE_MAX_AGE = 1800;

type InvitationReq = FastifyRequest<{ Params: { realm: string }; Querystring: { key?: string }; Body: Record<string, unknown> | undefined }>;

const HINT = msg('invitationHint');
const INVALID = { title: msg('invitationInvalidTitle'), description: msg('invitationInvalidMessage') };
const EXPIRED = { title: msg('invitationExpiredTitle'), description: msg('invitationExpiredMessage') };

export const invitationPath = (realmId: string): string => `/auth/realms/${encodeURIComponent(realmId)}/login-actions/org-invitation`;
const accountPath = (realmId: string): string => `/auth/realms/${encodeURIComponent(realmId)}/account`;

interface Opened {
  realm: Realm;
  realmName: string;
  inv: Invitation;
  org: OrganizationDetails;
  key: string;
  /** The existing user invited (null: a registration link). */
  user: User | null;
}

/**
 * The invitation a link opens: of this realm, not expired, its organization there and enabled, its user
 * (if any) there and enabled. Otherwise the page saying which (400), an INVITE_ORG_ERROR event, and undefined.
 */
async function open(services: Services, req: InvitationReq, reply: FastifyReply, key: unknown): Promise<Opened | undefined> {
  const realm = await services.cache.realm(req.params.realm);
  if (!realm) {
    renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
    return undefined;
  }
  const realmName = realm.displayName ?? realm.id;
  reply.header('cache-control', 'no-store');
  // The invitation's pages speak the language of the browser (a GET shows its language menu).
  await useTranslator(services, req, reply, realm);
  const refuse = (what: { title: Text; description: Text }, reason: string): undefined => {
    // Anyone can send a made-up link: sampled, as the other mailed links.
    void services.audit.record({ realmId: realm.id, type: 'INVITE_ORG_ERROR', outcome: 'failure', clientId: 'account', ip: req.ip, reason: `invitation link refused: ${reason}` }, { anonymous: true });
    sendPage(reply, 400, () => linkRefusedPage({ realmName, ...what, hint: HINT }));
    return undefined;
  };
  const inv = await invitationOfLink(services.store, realm.id, key);
  if (!inv) return refuse(INVALID, 'no such invitation');
  if (inv.expiresAt <= nowSeconds(services.clock)) return refuse(EXPIRED, 'expired');
  const org = await services.store.organizationAdmin.get(inv.organizationId);
  if (!org || org.realmId !== realm.id || !org.enabled) return refuse({ title: msg('invitationOrganizationUnavailableTitle'), description: msg('invitationOrganizationUnavailableMessage') }, 'organization gone or disabled');
  let user: User | null = null;
  if (inv.userId !== null) {
    const u = await services.store.users.get(inv.userId);
    if (!u || u.realmId !== realm.id || !u.enabled) return refuse(INVALID, 'invited user gone or disabled');
    user = u;
  }
  return { realm, realmName, inv, org, key: key as string, user };
}

/** The signed-in user of this browser in the realm, if any. */
async function sessionUser(services: Services, req: FastifyRequest, realm: Realm): Promise<User | undefined> {
  const session = await browserSession(services, req, realm.id);
  return session ? services.store.users.get(session.userId) : undefined;
}

/** Where a new member goes: the organization's redirectUrl (Keycloak 26), else the account page. */
function joined(reply: FastifyReply, o: Opened): FastifyReply {
  return reply.redirect(o.org.redirectUrl ?? accountPath(o.realm.id), 303);
}

const trimmed = (body: Record<string, unknown>, name: string, max: number): string => (typeof body[name] === 'string' ? (body[name] as string) : '').trim().slice(0, max);

export async function invitationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const path = '/auth/realms/:realm/login-actions/org-invitation';
  const csrfOf = (req: FastifyRequest, reply: FastifyReply, realm: Realm): Promise<string> => formCsrf(services, 'org-invitation', ensureBrowserBinding(req, reply, services.config, realm.id));

  async function showRegistration(req: FastifyRequest, reply: FastifyReply, o: Opened, status: number, values: RegistrationValues = {}, errors: Text[] = []): Promise<FastifyReply> {
    const csrf = await csrfOf(req, reply, o.realm);
    return sendPage(
      reply,
      status,
      () => registerPage({
        realmName: o.realmName,
        clientName: o.org.name,
        action: `${invitationPath(o.realm.id)}/register`,
        csrf,
        back: accountPath(o.realm.id),
        emailAsUsername: o.realm.registrationEmailAsUsername,
        rule: localizedRule(o.realm.passwordPolicy),
        values: { firstName: o.inv.firstName ?? '', lastName: o.inv.lastName ?? '', ...values },
        errors,
        invitation: { organizationName: o.org.name, email: o.inv.email, key: o.key },
      }),
    );
  }

  async function showInvitation(req: FastifyRequest, reply: FastifyReply, o: Opened & { user: User }): Promise<FastifyReply> {
    const signedIn = await sessionUser(services, req, o.realm);
    const base = { realmName: o.realmName, organizationName: o.org.name, action: invitationPath(o.realm.id), csrf: await csrfOf(req, reply, o.realm), key: o.key };
    if (!signedIn) {
      setRealmCookie(reply, services.config, o.realm.id, INVITATION_COOKIE, o.key, INVITATION_COOKIE_MAX_AGE);
      return sendPage(reply, 200, () => invitationPage({ ...base, state: { kind: 'sign-in', signIn: accountPath(o.realm.id) } }));
    }
    if (signedIn.id !== o.user.id) return sendPage(reply, 403, () => invitationPage({ ...base, state: { kind: 'other-user', username: signedIn.username, account: accountPath(o.realm.id) } }));
    return sendPage(reply, 200, () => invitationPage({ ...base, state: { kind: 'accept', username: signedIn.username } }));
  }

  app.get(path, async (req: InvitationReq, reply) => {
    const o = await open(services, req, reply, req.query.key);
    if (!o) return reply;
    if (o.user) return showInvitation(req, reply, { ...o, user: o.user });
    return showRegistration(req, reply, o, 200);
  });

  // Accepting, as the invited user signed in in this browser, with the page's CSRF token.
  app.post(path, async (req: InvitationReq, reply) => {
    const body = req.body ?? {};
    const o = await open(services, req, reply, body.key);
    if (!o) return reply;
    if (!(await checkFormCsrf(req, services, o.realm.id, 'org-invitation', body.csrf))) return renderError(reply, 403, { realmName: o.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    if (!o.user) return showRegistration(req, reply, o, 200);
    const signedIn = await sessionUser(services, req, o.realm);
    if (signedIn?.id !== o.user.id) return showInvitation(req, reply, { ...o, user: o.user });
    if (!(await acceptInvitation(services, o.inv, o.key, o.user, req.ip))) return sendPage(reply, 400, () => linkRefusedPage({ realmName: o.realmName, ...INVALID, hint: HINT }));
    return joined(reply, o);
  });

  // A new user's registration through the link: the email is the invitation's, verified by the link itself.
  app.post(`${path}/register`, async (req: InvitationReq, reply) => {
    const body = req.body ?? {};
    const o = await open(services, req, reply, body.key);
    if (!o) return reply;
    if (!(await checkFormCsrf(req, services, o.realm.id, 'org-invitation', body.csrf))) return renderError(reply, 403, { realmName: o.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    if (o.user) return showInvitation(req, reply, { ...o, user: o.user });
    const emailAsUsername = o.realm.registrationEmailAsUsername;
    const values: Required<RegistrationValues> = {
      username: emailAsUsername ? '' : trimmed(body, 'username', LIMITS.username + 1),
      email: o.inv.email,
      firstName: trimmed(body, 'firstName', LIMITS.personName),
      lastName: trimmed(body, 'lastName', LIMITS.personName),
    };
    const str = (name: string): string => (typeof body[name] === 'string' ? (body[name] as string).slice(0, 1024) : '');
    const password = str('password-new');
    const event = { realmId: o.realm.id, clientId: 'account', ip: req.ip, username: (emailAsUsername ? values.email : values.username).toLowerCase().slice(0, 255) || null };
    const refuse = async (errors: Text[], reason: string): Promise<FastifyReply> => {
      await services.audit.record({ ...event, type: 'REGISTER_ERROR', outcome: 'failure', reason }, { anonymous: true });
      return showRegistration(req, reply, o, 400, values, errors);
    };
    const { errors, code } = await registrationProblems(services, o.realm, values, password, str('password-confirm'));
    if (errors.length > 0) return refuse(errors, code);
    const username = emailAsUsername ? values.email : values.username.toLowerCase();
    let id: string;
    try {
      ({ id } = await createUser(services.store, { realmId: o.realm.id, username, password, email: values.email, firstName: values.firstName, lastName: values.lastName, emailVerified: true, selfRegistration: true }));
    } catch (err) {
      if (err instanceof ConflictError) return refuse([msg(emailAsUsername ? 'emailExistsMessage' : 'usernameExistsMessage')], emailAsUsername ? 'email_in_use' : 'username_in_use');
      if (err instanceof ValidationError) return refuse([err.message], 'invalid_registration');
      throw err;
    }
    const user = (await services.store.users.get(id))!;
    await services.audit.record({ ...event, type: 'REGISTER', outcome: 'success', userId: user.id, username: user.username, reason: `register_method organization invitation, email ${user.email ?? ''}` });
    if (!(await acceptInvitation(services, o.inv, o.key, user, req.ip))) return sendPage(reply, 400, () => linkRefusedPage({ realmName: o.realmName, ...INVALID, hint: msg('invitationAcceptFailedHint') }));
    // Signed in, as after Keycloak's registration.
    const { secret, session } = await createBrowserSession(services, o.realm, user.id, { from: sessionOrigin(req) });
    setSessionCookies(reply, services.config, session, secret, nowSeconds(services.clock));
    return joined(reply, o);
  });
}
