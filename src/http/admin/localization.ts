import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import type { Realm } from '../../storage/types.js';
import { deleteTexts, getText, getTexts, listTextLocales, MAX_KEY_LENGTH, setText, setTexts } from '../../admin/operations/localization.js';
import { ValidationError } from '../../admin/validation.js';
import { actorOf, requireRole } from './authenticate.js';
import { callerOf, loadRealm } from './plugin.js';
import { anyObject, noContent204, params, realmParams, security } from './schemas.js';

const tags = ['realms'];
const localeParams = params({ locale: { type: 'string', maxLength: 64 } });
const keyParams = params({ locale: { type: 'string', maxLength: 64 }, key: { type: 'string', maxLength: MAX_KEY_LENGTH } });
type L = { Params: { realm: string; locale: string } };
type K = { Params: { realm: string; locale: string; key: string } };

/**
 * Keycloak's RealmLocalizationResource (keycloak-admin-client's realms.getRealmSpecificLocales,
 * getRealmLocalizationTexts, addLocalization, deleteRealmLocalizationTexts): the realm's own texts. As
 * Keycloak: reading needs any admin role of the realm (its requireAnyAdminRole, loadRealm's check),
 * changing needs manage-realm; a text is text/plain both ways.
 */
export async function localizationRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  const base = '/realms/:realm/localization';
  const readable = async (req: FastifyRequest<{ Params: { realm: string } }>): Promise<Realm> => loadRealm(services, callerOf(req), req.params.realm);
  const changeable = async (req: FastifyRequest<{ Params: { realm: string } }>): Promise<{ caller: AdminCaller; realm: Realm }> => {
    const caller = callerOf(req);
    const realm = await loadRealm(services, caller, req.params.realm);
    requireRole(caller, realm.id, 'manage-realm');
    return { caller, realm };
  };

  app.get<{ Params: { realm: string } }>(base, { schema: { tags, summary: 'The locales that have localization texts of the realm, sorted', params: realmParams, security } }, async (req) => {
    const realm = await readable(req);
    return listTextLocales(store, realm.id);
  });

  app.get<L & { Querystring: { useRealmDefaultLocaleFallback?: boolean } }>(
    `${base}/:locale`,
    {
      schema: {
        tags,
        summary: "A locale's texts, key: text ({} when none); useRealmDefaultLocaleFallback=true fills the keys it lacks with the default locale's (Keycloak's deprecated parameter)",
        params: localeParams,
        querystring: { type: 'object', properties: { useRealmDefaultLocaleFallback: { type: 'boolean' } } },
        security,
      },
    },
    async (req) => {
      const realm = await readable(req);
      return getTexts(store, { realmId: realm.id, locale: req.params.locale, defaultFallback: req.query.useRealmDefaultLocaleFallback === true });
    },
  );

  app.post<L>(`${base}/:locale`, { schema: { tags, summary: "Add or replace texts of a locale (a JSON object key: text); the locale's other texts stay", params: localeParams, body: anyObject, response: noContent204, security } }, async (req, reply) => {
    const { caller, realm } = await changeable(req);
    await setTexts(store, { realmId: realm.id, locale: req.params.locale, texts: req.body as Record<string, string> }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });

  // keycloak-admin-client's deleteRealmLocalizationTexts without a key asks DELETE .../{locale}/ (the
  // router ignores the trailing slash): the whole locale.
  app.delete<L>(`${base}/:locale`, { schema: { tags, summary: "Delete every text of a locale (404 when it has none)", params: localeParams, response: noContent204, security } }, async (req, reply) => {
    const { caller, realm } = await changeable(req);
    await deleteTexts(store, { realmId: realm.id, locale: req.params.locale }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });

  app.get<K>(`${base}/:locale/:key`, { schema: { tags, summary: 'One text, as text/plain (404 when none)', params: keyParams, produces: ['text/plain'], response: { 200: { description: 'The text', type: 'string' } }, security } }, async (req, reply) => {
    const realm = await readable(req);
    const text = await getText(store, { realmId: realm.id, locale: req.params.locale, key: req.params.key });
    return reply.type('text/plain; charset=utf-8').send(text);
  });

  app.put<K>(
    `${base}/:locale/:key`,
    { schema: { tags, summary: 'Add or replace one text (a text/plain body)', params: keyParams, consumes: ['text/plain'], body: { type: 'string' }, response: noContent204, security } },
    async (req, reply) => {
      const { caller, realm } = await changeable(req);
      // An empty body is an empty text (Keycloak stores "").
      const value = req.body ?? '';
      if (typeof value !== 'string') throw new ValidationError('the text must be a text/plain body');
      await setText(store, { realmId: realm.id, locale: req.params.locale, key: req.params.key, value }, actorOf(caller));
      services.cache.clear();
      return reply.code(204).send();
    },
  );

  app.delete<K>(`${base}/:locale/:key`, { schema: { tags, summary: 'Delete one text (404 when none)', params: keyParams, response: noContent204, security } }, async (req, reply) => {
    const { caller, realm } = await changeable(req);
    await deleteTexts(store, { realmId: realm.id, locale: req.params.locale, key: req.params.key }, actorOf(caller));
    services.cache.clear();
    return reply.code(204).send();
  });
}
