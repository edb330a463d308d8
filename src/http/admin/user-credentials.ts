import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../admin/operations/common.js';
import type { Services } from '../../services.js';
import { removeAllUserOtp, removeAnyUserCredential, renameUserCredential, userCredentials, userStorageCredentialTypes } from '../../admin/operations/user-credentials.js';
import { toCredentialRepresentations } from '../../admin/keycloak/representations/credential.js';
import { ValidationError } from '../../admin/validation.js';
import { actorOf } from './authenticate.js';
import { callerOf } from './plugin.js';
import { noContent204, params, security } from './schemas.js';
import { userParams, userTarget, type UserReq } from './users.js';

const tags = ['users'];
const credentialParams = params({ id: { type: 'string', maxLength: 64 }, credentialId: { type: 'string', maxLength: 64 } });
type CredentialReq = { Params: { realm: string; id: string; credentialId: string } };

/** The label of a userLabel PUT: text/plain as keycloak-admin-client sends it (or a JSON string). */
function labelOf(body: unknown): string {
  if (body === undefined) return '';
  if (typeof body !== 'string') throw new ValidationError('the body must be the label as text (content-type text/plain)');
  return body;
}

/** Keycloak's UserResource credentials: the password and the TOTP authenticators of a user. */
export async function userCredentialRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get<UserReq>(
    '/realms/:realm/users/:id/credentials',
    { schema: { tags, summary: "A user's credentials (Keycloak's CredentialRepresentation without secretData): the password, then each TOTP authenticator (type otp)", params: userParams, security } },
    async (req) => {
      const user = await userTarget(services, callerOf(req), req.params.realm, req.params.id, 'view-users');
      return toCredentialRepresentations(await userCredentials(store, { realmId: user.realmId, user: user.id }));
    },
  );

  /** A change to one credential of the user (manage-users), answered 204. */
  const change = (run: (ref: { realmId: string; user: string; credentialId: string }, actor: Actor, body: unknown) => Promise<unknown>) =>
    async (req: FastifyRequest<CredentialReq>, reply: FastifyReply): Promise<FastifyReply> => {
      const caller = callerOf(req);
      const user = await userTarget(services, caller, req.params.realm, req.params.id, 'manage-users');
      await run({ realmId: user.realmId, user: user.id, credentialId: req.params.credentialId }, actorOf(caller), req.body);
      return reply.code(204).send();
    };

  app.delete<CredentialReq>(
    '/realms/:realm/users/:id/credentials/:credentialId',
    { schema: { tags, summary: 'Remove a TOTP authenticator, or the recovery codes (the password cannot be removed: 400)', params: credentialParams, response: noContent204, security } },
    change((ref, actor) => removeAnyUserCredential(store, ref, actor)),
  );

  // keycloak-admin-client's users.removeTotp: every authenticator app of the user (and with the last one
  // the recovery codes, as removing each one does), each audited as its own removal; 204 when there is none.
  app.put<UserReq>(
    '/realms/:realm/users/:id/remove-totp',
    { schema: { tags, summary: "Remove all the user's TOTP authenticators (and so their recovery codes)", params: userParams, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const user = await userTarget(services, caller, req.params.realm, req.params.id, 'manage-users');
      await removeAllUserOtp(store, { realmId: user.realmId, user: user.id }, actorOf(caller));
      return reply.code(204).send();
    },
  );

  // users.getUserStorageCredentialTypes (src/admin/operations/user-credentials.ts userStorageCredentialTypes).
  app.get<UserReq>(
    '/realms/:realm/users/:id/configured-user-storage-credential-types',
    { schema: { tags, summary: "The credential types the user's storage provider checks: [\"password\"] for a user of an LDAP provider, else []", params: userParams, security } },
    async (req) => {
      const user = await userTarget(services, callerOf(req), req.params.realm, req.params.id, 'view-users');
      return userStorageCredentialTypes(store, { realmId: user.realmId, user: user.id });
    },
  );

  app.put<CredentialReq>(
    '/realms/:realm/users/:id/credentials/:credentialId/userLabel',
    { schema: { tags, summary: 'Rename a TOTP authenticator: the body is the label as text/plain (at most 255 characters, no control characters; blank removes it)', params: credentialParams, response: noContent204, security } },
    change((ref, actor, body) => renameUserCredential(store, { ...ref, label: labelOf(body) }, actor)),
  );
}
