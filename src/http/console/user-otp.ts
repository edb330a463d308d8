import type { FastifyInstance, FastifyReply } from 'fastify';
import type { User } from '../../storage/types.js';
import { removeUserCredential, removeUserWebAuthn, userCredentials } from '../../admin/operations/user-credentials.js';
import { requireUser, updateUser } from '../../admin/operations/users.js';
import { realmBase } from '../../views/console/layout.js';
import { CONSOLE_PATH } from './session.js';
import { field, type ConsoleKit, type Req, type Signed } from './common.js';

/** Outcomes a redirect of these forms may announce (routes.ts adds them to its fixed set). */
export const OTP_NOTICES: Record<string, string> = {
  'otp-removed': 'The authenticator app was removed: the user signs in without it.',
  'otp-setup-on': 'The user sets up an authenticator app at the next sign-in.',
  'otp-setup-off': 'The user is no longer asked to set up an authenticator app.',
  'webauthn-removed': 'The security key was removed: the user signs in without it.',
  'webauthn-setup-on': 'The user registers a security key at the next sign-in.',
  'webauthn-setup-off': 'The user is no longer asked to register a security key.',
  'required-actions-saved': "The user's required actions were saved.",
};

/**
 * A user's authenticator apps in the console, as the admin API decides for them (manage-users): remove
 * one (the form names it by id, and only one of this user's is removed), and require setup at the next
 * sign-in or stop requiring it (CONFIGURE_TOTP).
 */
export function userOtpRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { services, signedIn, realmOf, need, attempt, showUser } = kit;
  const store = services.store;
  const R = `${CONSOLE_PATH}/realms/:realm`;
  const userUrl = (realmId: string, userId: string): string => `${realmBase(realmId)}/users/${encodeURIComponent(userId)}`;

  /** The signed-in admin (manage-users in the realm of the URL) and the user of the URL; undefined once the reply is sent. */
  async function managedUser(req: Req, reply: FastifyReply): Promise<{ s: Signed; realmId: string; user: User } | undefined> {
    const s = await signedIn(req, reply);
    if (!s) return undefined;
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, 'manage-users');
    return { s, realmId, user: await requireUser(store, realmId, req.params.user!) };
  }

  app.post(`${R}/users/:user/otp/remove`, async (req: Req, reply) => {
    const m = await managedUser(req, reply);
    if (!m) return reply;
    const { s, realmId, user } = m;
    const credentialId = field(req, 'credential');
    // A second click, or a form of another page: said on the page, nothing removed.
    if (!(await userCredentials(store, { realmId, user: user.id })).otp.some((c) => c.id === credentialId)) {
      return showUser(s, reply, realmId, user.id, 400, 'That authenticator app does not exist (any more) for this user.');
    }
    return attempt(
      reply,
      () => removeUserCredential(store, { realmId, user: user.id, credentialId }, s.actor),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${userUrl(realmId, user.id)}?done=otp-removed`,
    );
  });

  app.post(`${R}/users/:user/otp/setup`, async (req: Req, reply) => {
    const m = await managedUser(req, reply);
    if (!m) return reply;
    const { s, realmId, user } = m;
    const required = field(req, 'required');
    if (required !== 'on' && required !== 'off') return showUser(s, reply, realmId, user.id, 400, 'Choose whether the user must set up an authenticator app (on or off).');
    return attempt(
      reply,
      () => updateUser(store, { realmId, user: user.id, requireOtpSetup: required === 'on' }, s.actor),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${userUrl(realmId, user.id)}?done=otp-setup-${required}`,
    );
  });

  app.post(`${R}/users/:user/required-actions`, async (req: Req, reply) => {
    const m = await managedUser(req, reply);
    if (!m) return reply;
    const { s, realmId, user } = m;
    // The ticked boxes: none, one (a string) or several (an array); the operation refuses an unknown name.
    const raw = (req.body as Record<string, unknown> | undefined)?.action;
    const actions = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (actions.length > 20 || actions.some((a) => typeof a !== 'string')) return showUser(s, reply, realmId, user.id, 400, 'Choose required actions from the list.');
    return attempt(
      reply,
      () => updateUser(store, { realmId, user: user.id, requiredActions: actions as string[] }, s.actor),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${userUrl(realmId, user.id)}?done=required-actions-saved`,
    );
  });

  app.post(`${R}/users/:user/webauthn/remove`, async (req: Req, reply) => {
    const m = await managedUser(req, reply);
    if (!m) return reply;
    const { s, realmId, user } = m;
    const credentialId = field(req, 'credential');
    const key = (await userCredentials(store, { realmId, user: user.id })).webauthn.find((c) => c.id === credentialId);
    if (!key) return showUser(s, reply, realmId, user.id, 400, 'That security key does not exist (any more) for this user.');
    return attempt(
      reply,
      () => removeUserWebAuthn(store, user, key, s.actor),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${userUrl(realmId, user.id)}?done=webauthn-removed`,
    );
  });

  app.post(`${R}/users/:user/webauthn/setup`, async (req: Req, reply) => {
    const m = await managedUser(req, reply);
    if (!m) return reply;
    const { s, realmId, user } = m;
    const required = field(req, 'required');
    if (required !== 'on' && required !== 'off') return showUser(s, reply, realmId, user.id, 400, 'Choose whether the user must register a security key (on or off).');
    return attempt(
      reply,
      () => updateUser(store, { realmId, user: user.id, requireWebAuthnSetup: required === 'on' }, s.actor),
      (error) => showUser(s, reply, realmId, user.id, 400, error),
      `${userUrl(realmId, user.id)}?done=webauthn-setup-${required}`,
    );
  });
}
