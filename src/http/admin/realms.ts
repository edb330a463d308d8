import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { mayCreateRealm, maySeeRealm } from '../../admin/authorization.js';
import { checkNotBefore, createRealm, deleteRealm, pushNotBefore, updateRealm } from '../../admin/operations/realms.js';
import { fromRealmRepresentation } from '../../admin/keycloak/representations/realm.js';
import { realmRepresentation } from '../../admin/operations/default-role.js';
import { ValidationError } from '../../admin/validation.js';
import { importRealmRepresentation } from '../../admin/operations/realm-import.js';
import { actorOf, requireRole } from './authenticate.js';
import { AdminHttpError, forbidden } from './errors.js';
import { testSmtpConnection } from '../../admin/operations/action-emails.js';
import { MailError } from '../../mail/mailer.js';
import { callerOf, created, loadRealm } from './plugin.js';
import { anyObject, created201, noContent204, realmParams, security } from './schemas.js';

const tags = ['realms'];

/** A RealmRepresentation that carries more than settings (as `kc.sh export` writes): imported whole. */
function isFullRepresentation(b: Record<string, unknown>): boolean {
  // Keycloak's localizationTexts ({locale: {key: text}}) are the import's too (Keycloak creates every realm by its import).
  const texts = b.localizationTexts;
  if (texts !== null && typeof texts === 'object' && Object.keys(texts).length > 0) return true;
  return ['clients', 'users', 'clientScopes', 'organizations'].some((k) => Array.isArray(b[k]) && (b[k] as unknown[]).length > 0);
}

function body(b: unknown): Record<string, unknown> {
  if (b === undefined || b === null) return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new ValidationError('the request body must be a JSON object');
  return b as Record<string, unknown>;
}

/** Keycloak's RealmsAdminResource and RealmAdminResource: realms and their not-before push. */
export async function realmRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;

  app.get('/realms', { schema: { tags, summary: 'Realms the caller may administer', security } }, async (req) => {
    const caller = callerOf(req);
    const realms = await store.realms.list();
    return Promise.all(realms.filter((r) => maySeeRealm(caller, r.id)).map((r) => realmRepresentation(store, r)));
  });

  app.post('/realms', { schema: { tags, summary: 'Create a realm (master admin or create-realm)', body: anyObject, response: created201, security } }, async (req, reply) => {
    const caller = callerOf(req);
    if (!mayCreateRealm(caller)) throw forbidden('creating a realm needs the admin or create-realm role of the master realm');
    if (isFullRepresentation(body(req.body))) {
      // A realm with its clients, users, ...: Keycloak's import, the same operation as `realm import`.
      const report = await importRealmRepresentation(store, body(req.body), actorOf(caller), (realm, err) => req.log.error({ err, realm }, 'realm import failed'));
      services.cache.clear();
      return created(services, reply, encodeURIComponent(report.realm));
    }
    const changes = fromRealmRepresentation(body(req.body));
    if (!changes.id) throw new ValidationError('realm is required');
    // Checked before the realm is created: a refused notBefore creates nothing.
    if (changes.notBefore) checkNotBefore(changes.notBefore);
    const realm = await createRealm(
      store,
      { id: changes.id, ...(changes.displayName ? { displayName: changes.displayName } : {}), settings: changes.settings, ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}), ...(changes.smtpPassword !== undefined ? { smtpPassword: changes.smtpPassword } : {}) },
      actorOf(caller),
    );
    if (changes.notBefore) await updateRealm(store, { realmId: realm.id, notBefore: changes.notBefore }, actorOf(caller));
    services.cache.clear();
    return created(services, reply, encodeURIComponent(realm.id));
  });

  app.get<{ Params: { realm: string } }>('/realms/:realm', { schema: { tags, summary: 'Read a realm', params: realmParams, security } }, async (req) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'view-realm');
    return realmRepresentation(store, realm);
  });

  app.put<{ Params: { realm: string } }>('/realms/:realm', { schema: { tags, summary: 'Update a realm: lifetimes, brute-force settings, enabled, notBefore, passwordPolicy (Keycloak syntax; the policies Realmgate enforces), defaultRole', params: realmParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-realm');
    const changes = fromRealmRepresentation(body(req.body), realm);
    if (changes.id !== undefined && changes.id !== realm.id) throw new ValidationError('a realm cannot be renamed');
    await updateRealm(
      store,
      {
        realmId: realm.id,
        settings: changes.settings,
        ...(changes.displayName !== undefined ? { displayName: changes.displayName } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        ...(changes.notBefore !== undefined ? { notBefore: changes.notBefore } : {}),
        ...(changes.smtpPassword !== undefined ? { smtpPassword: changes.smtpPassword } : {}),
        ...(changes.defaultRole !== undefined ? { defaultRole: changes.defaultRole } : {}),
      },
      actorOf(caller),
    );
    services.cache.clear();
    return reply.code(204).send();
  });

  app.delete<{ Params: { realm: string } }>('/realms/:realm', { schema: { tags, summary: 'Delete a realm and everything in it', params: realmParams, response: noContent204, security } }, async (req, reply) => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-realm');
    await deleteRealm(store, { realmId: realm.id }, actorOf(caller));
    services.cache.clear();
    services.keys.clear();
    return reply.code(204).send();
  });

  app.post<{ Params: { realm: string }; Body: unknown }>(
    '/realms/:realm/testSMTPConnection',
    { schema: { tags, summary: "Send a test mail with the SMTP settings in the body (Keycloak's smtpServer map, not saved) to the calling admin's email", params: realmParams, body: anyObject, response: noContent204, security } },
    async (req, reply) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      try {
        await testSmtpConnection(store, { realmId: realm.id, adminUserId: caller.userId, settings: req.body });
      } catch (err) {
        if (err instanceof MailError) {
          req.log.warn({ realm: realm.id, reason: err.message }, 'SMTP test failed');
          throw new AdminHttpError(502, 'HTTP 502 Bad Gateway', `Failed to send email: ${err.message}`);
        }
        throw err;
      }
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { realm: string } }>(
    '/realms/:realm/push-revocation',
    { schema: { tags, summary: 'Refuse every token of the realm issued until now (not-before push)', params: realmParams, security } },
    async (req) => {
      const caller = callerOf(req);
      const realm = await loadRealm(services, caller, req.params.realm);
      requireRole(caller, realm.id, 'manage-realm');
      await pushNotBefore(store, { realmId: realm.id, nowMs: () => services.clock.nowMs() }, actorOf(caller));
      services.cache.clear();
      // Keycloak's GlobalRequestResult: Realmgate has no client URLs to notify.
      return { successRequests: [], failedRequests: [] };
    },
  );
}
