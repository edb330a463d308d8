import type { FastifyInstance, FastifyReply } from 'fastify';
import { hasAdminRole } from '../../admin/authorization.js';
import { bindCredentialOf, createUserStorage, deleteUserStorage, listUserStorage, requireUserStorage, updateUserStorage } from '../../admin/operations/user-storage.js';
import { ValidationError } from '../../admin/validation.js';
import { ldapSettings } from '../../oauth/ldap/federation.js';
import { LdapUnavailable, testDirectory } from '../../oauth/ldap/directory.js';
import { federationUrl, userFederationPage } from '../../views/console/user-federation-pages.js';
import { sendPage } from '../interaction/render.js';
import { CONSOLE_PATH } from './session.js';
import { field, isRefusal, type ConsoleKit, type Req, type Signed } from './common.js';

/** Outcomes a redirect of these pages may announce (routes.ts adds them to its fixed set). */
export const FEDERATION_NOTICES: Record<string, string> = {
  'ldap-created': 'The LDAP provider was added: its users can sign in.',
  'ldap-enabled': 'The LDAP provider was enabled: its users can sign in.',
  'ldap-disabled': 'The LDAP provider was disabled: its users cannot sign in (local users are not affected).',
  'ldap-deleted': 'The LDAP provider was deleted; its imported users stay, without a password.',
  'ldap-tested': 'Connected to the directory and bound as the bind DN.',
};

const FIELDS = ['name', 'connectionUrl', 'usersDn', 'searchScope', 'bindDn', 'usernameLDAPAttribute', 'uuidLDAPAttribute', 'userObjectClasses'] as const;

/** User federation (LDAP) in the console, as the admin API decides: view-realm to read, manage-realm to change. */
export function userFederationRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { services, signedIn, realmOf, need, attempt } = kit;
  const store = services.store;
  const R = `${CONSOLE_PATH}/realms/:realm/user-federation`;

  async function federationRealm(s: Signed, req: Req, level: 'view' | 'manage'): Promise<string> {
    const realmId = await realmOf(s.caller, req.params.realm!);
    need(s.caller, realmId, level === 'view' ? 'view-realm' : 'manage-realm');
    return realmId;
  }

  async function show(s: Signed, reply: FastifyReply, realmId: string, status = 200, error?: string, form?: Record<string, string>): Promise<FastifyReply> {
    const frame = { ...s.frame, title: 'User federation', realmId, ...(error ? { error } : {}) };
    return sendPage(reply, status, userFederationPage(frame, await listUserStorage(store, realmId), hasAdminRole(s.caller, realmId, 'manage-realm'), form));
  }

  app.get(R, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    return show(s, reply, await federationRealm(s, req, 'view'));
  });

  app.post(R, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await federationRealm(s, req, 'manage');
    const form: Record<string, string> = {};
    for (const name of FIELDS) form[name] = field(req, name).trim();
    form.startTls = req.body?.startTls === 'on' ? 'on' : 'off';
    const secret = typeof req.body?.bindCredential === 'string' ? req.body.bindCredential : '';
    const config: Record<string, string[]> = { startTls: [String(form.startTls === 'on')], authType: [form.bindDn ? 'simple' : 'none'] };
    for (const name of FIELDS) if (name !== 'name' && form[name]) config[name] = [form[name]!];
    if (form.bindDn) config.bindCredential = [secret];
    try {
      if (form.bindDn && !secret) throw new ValidationError("Give the bind DN's password.");
      await createUserStorage(store, s.actor, realmId, { name: form.name!, providerId: 'ldap', config });
    } catch (err) {
      if (isRefusal(err)) return show(s, reply, realmId, 400, err.message, form);
      throw err;
    }
    return reply.redirect(`${federationUrl(realmId)}?done=ldap-created`, 303);
  });

  for (const enabled of [true, false]) {
    app.post(`${R}/:id/${enabled ? 'enable' : 'disable'}`, async (req: Req, reply) => {
      const s = await signedIn(req, reply);
      if (!s) return reply;
      const realmId = await federationRealm(s, req, 'manage');
      const p = await requireUserStorage(store, realmId, req.params.id!);
      return attempt(
        reply,
        () => updateUserStorage(store, s.actor, realmId, p.id, { config: { enabled: [String(enabled)] } }),
        (error) => show(s, reply, realmId, 400, error),
        `${federationUrl(realmId)}?done=ldap-${enabled ? 'enabled' : 'disabled'}`,
      );
    });
  }

  app.post(`${R}/:id/test`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await federationRealm(s, req, 'manage');
    const p = await requireUserStorage(store, realmId, req.params.id!);
    try {
      await testDirectory(ldapSettings(p), await bindCredentialOf(store, p), 'testAuthentication');
    } catch (err) {
      if (err instanceof LdapUnavailable) return show(s, reply, realmId, 400, `${p.name}: ${err.message}`);
      throw err;
    }
    return reply.redirect(`${federationUrl(realmId)}?done=ldap-tested`, 303);
  });

  // Deleting asks for the name typed again, as deleting a client does.
  app.post(`${R}/:id/delete`, async (req: Req, reply) => {
    const s = await signedIn(req, reply);
    if (!s) return reply;
    const realmId = await federationRealm(s, req, 'manage');
    const p = await requireUserStorage(store, realmId, req.params.id!);
    if (field(req, 'confirm') !== p.name) return show(s, reply, realmId, 400, 'Type the name to confirm that the provider is to be deleted.');
    return attempt(
      reply,
      () => deleteUserStorage(store, s.actor, realmId, p.id),
      (error) => show(s, reply, realmId, 400, error),
      `${federationUrl(realmId)}?done=ldap-deleted`,
    );
  });
}
