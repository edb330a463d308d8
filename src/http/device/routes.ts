import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { Realm } from '../../storage/types.js';
import { nowSeconds } from '../../clock.js';
import { tokenHash } from '../../crypto/random.js';
import { handleDeviceAuthorization } from '../../oauth/device/authorization.js';
import { normalizeUserCode, userCodeHash } from '../../oauth/device/user-code.js';
import { beginInteraction, nextStep } from '../../oauth/authorize/interaction.js';
import { deviceEntryPage } from '../../views/device-pages.js';
import { deviceDonePage } from '../../views/pages.js';
import { BROWSER_COOKIE, SESSION_COOKIE, checkFormCsrf, ensureBrowserBinding, formCsrf, readRealmCookie } from '../cookies.js';
import { FailureLimiter } from '../../failure-limiter.js';
import { setNoStore } from '../plugins/security-headers.js';
import { htmlErrorHandler, interactionUrl, renderError, sendPage, tooManySignIns } from '../interaction/render.js';
import { InteractionLimitError } from '../../oauth/authorize/interaction-caps.js';
import { jsonErrorHandler, requireForm } from '../token/routes.js';
import { useTranslator } from '../i18n.js';
import { msg, type Text } from '../../i18n/translator.js';

type Req = FastifyRequest<{ Params: { realm: string }; Querystring: Record<string, unknown>; Body: Record<string, unknown> | undefined }>;

const BAD_CODE = msg('oauth2DeviceInvalidUserCodeMessage');

/** RFC 8628: the device authorization endpoint (JSON) and the verification page (HTML). */
export async function deviceRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  // RFC 8628 5.1: user codes are short, so wrong guesses are limited per client address.
  const guesses = new FailureLimiter(10, 10 * 60_000, () => services.clock.nowMs());

  await app.register(async (json) => {
    json.setErrorHandler(jsonErrorHandler(services));
    json.post<{ Params: { realm: string } }>('/auth/realms/:realm/protocol/openid-connect/auth/device', async (req, reply) => {
      requireForm(req.headers['content-type']);
      const body = await handleDeviceAuthorization(services, {
        realmId: req.params.realm,
        authorization: req.headers.authorization,
        body: req.body as Record<string, unknown> | undefined,
        ip: req.ip,
      });
      setNoStore(reply);
      return body;
    });
  });

  await app.register(async (pages) => {
    pages.setErrorHandler(htmlErrorHandler(services));
    const path = '/auth/realms/:realm/device';

    // The form posts back to this page: a path built from the realm, never from the request's URL, which
    // in absolute form (GET http://other.example/...) would carry another origin (issue 12).
    const actionOf = (realm: Realm): string => `/auth/realms/${encodeURIComponent(realm.id)}/device`;

    async function realmOf(req: Req, reply: FastifyReply): Promise<Realm | undefined> {
      const realm = await services.cache.realm(req.params.realm);
      if (!realm) {
        renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
        return undefined;
      }
      // The language menu's links show the page again: a GET's own address (with its user_code), else
      // the entry page.
      await useTranslator(services, req, reply, realm, req.method === 'GET' ? {} : { here: actionOf(realm) });
      return realm;
    }

    pages.get(path, async (req: Req, reply) => {
      const realm = await realmOf(req, reply);
      if (!realm) return reply;
      const binding = ensureBrowserBinding(req, reply, services.config, realm.id);
      const raw = req.query.user_code;
      const userCode = typeof raw === 'string' && raw.length <= 32 ? raw : undefined;
      const csrf = await formCsrf(services, 'device', binding);
      return sendPage(reply, 200, () => deviceEntryPage({ realmName: realm.displayName ?? realm.id, action: actionOf(realm), csrf, ...(userCode ? { userCode } : {}) }));
    });

    pages.post(path, async (req: Req, reply) => {
      const realm = await realmOf(req, reply);
      if (!realm) return reply;
      const realmName = realm.displayName ?? realm.id;
      const cookie = readRealmCookie(req, services.config, realm.id, BROWSER_COOKIE);
      const csrf = req.body?.csrf;
      if (!cookie || typeof csrf !== 'string' || !(await checkFormCsrf(req, services, realm.id, 'device', csrf))) {
        return renderError(reply, 403, { realmName, title: msg('formExpiredTitle'), description: msg('formExpiredMessage') });
      }
      const action = actionOf(realm);
      const typed = typeof req.body?.user_code === 'string' ? req.body.user_code.trim().slice(0, 32) : '';
      // The code the user typed is shown again, so that a typo can be seen and fixed.
      const again = (status: number, error: Text): FastifyReply =>
        sendPage(reply, status, () => deviceEntryPage({ realmName, action, csrf, error, ...(typed ? { userCode: typed } : {}) }));
      const wait = guesses.blockedFor(req.ip);
      if (wait > 0) {
        reply.header('retry-after', String(Math.ceil(wait / 1000)));
        return again(429, msg('deviceTooManyWrongCodes'));
      }
      const input = typeof req.body?.user_code === 'string' ? req.body.user_code : '';
      const normalized = normalizeUserCode(input);
      const now = nowSeconds(services.clock);
      const device = normalized ? await services.store.devices.findByUserCode(userCodeHash(normalized)) : undefined;
      if (!device || device.realmId !== realm.id || device.status !== 'pending' || device.expiresAt <= now) {
        guesses.fail(req.ip);
        return again(400, BAD_CODE);
      }
      const client = await services.cache.client(realm.id, device.clientId);
      if (!client || !client.enabled) return again(400, BAD_CODE);

      const sessionSecret = readRealmCookie(req, services.config, realm.id, SESSION_COOKIE);
      const session = sessionSecret ? await services.store.sessions.findActive(realm.id, tokenHash(sessionSecret), now) : undefined;
      let ia;
      try {
        ia = await beginInteraction(services, {
          realm,
          client,
          params: {
            clientId: client.clientId,
            redirectUri: '',
            scopes: device.scopes,
            state: undefined,
            codeChallenge: undefined,
            codeChallengeMethod: undefined,
            nonce: undefined,
            deviceCodeHash: device.hash,
            ...(device.resources.length > 0 ? { resources: device.resources } : {}),
          },
          browserHash: tokenHash(cookie),
          session,
          ip: req.ip,
        });
      } catch (err) {
        if (!(err instanceof InteractionLimitError)) throw err;
        return tooManySignIns(reply, realmName, err);
      }
      const step = await nextStep(services, realm, client, ia);
      if (step.kind === 'device-done') {
        return sendPage(reply, 200, () => deviceDonePage({ realmName, clientName: client.name ?? client.clientId, approved: step.approved }));
      }
      reply.header('cache-control', 'no-store');
      return reply.redirect(interactionUrl(realm.id, ia.id), 303);
    });
  });
}
