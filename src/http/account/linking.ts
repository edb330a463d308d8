import type { FastifyReply, FastifyRequest } from 'fastify';
import { realmBase, type Services } from '../../services.js';
import type { BrowserSession, Realm, User } from '../../storage/types.js';
import { randomToken, safeEqual } from '../../crypto/random.js';
import { BrokerError, providerAuthorizationUrl, providerIdentity } from '../../oauth/broker.js';
import { claimsToKeep } from '../../admin/operations/identity-provider-mappers.js';
import { linkableProviders, linkingProvider, linkProviderAccount, mayLinkAccounts, type AccountLinking } from '../../admin/operations/account-linking.js';
import { providerName } from '../../oauth/social-providers.js';
import { msg, type Text } from '../../i18n/translator.js';
import { browserSession, clearRealmCookie, readRealmCookie, setRealmCookie } from '../cookies.js';
import { renderError } from '../interaction/render.js';
import { useTranslator } from '../i18n.js';

/**
 * Linking an account at a provider from the account page (Keycloak's account console "Linked accounts",
 * "Link account"). There is no pending request as at an application's sign-in: the sign-in at the provider
 * gets an id of its own (the state, nonce and PKCE verifier are derived from it as for a request,
 * src/oauth/broker.ts), which a cookie binds to this browser and its session. A callback from another
 * browser, or after the session changed, links nothing: otherwise anyone could have a victim's browser
 * finish a link started with the attacker's own account at the provider, and then sign in as the victim
 * (RFC 6749 10.12, RFC 9700 4.7).
 */

const PREFIX = 'account:';
/** The pending link (its id and the session it was started in), then the outcome shown by the account page. */
const LINK_COOKIE = 'KC_ACCOUNT_LINK';
const NOTICE_COOKIE = 'KC_ACCOUNT_NOTICE';
/** How long the browser has to come back from the provider. */
const LINK_LIFETIME_S = 600;

type Outcome = AccountLinking | 'cancelled' | 'failed';
const OUTCOMES: readonly Outcome[] = ['linked', 'linked-already', 'elsewhere', 'taken', 'cancelled', 'failed'];

/** Whether a callback's state names a link started on the account page (not an application's sign-in). */
export const isAccountLink = (id: string): boolean => id.startsWith(PREFIX);

const binding = (id: string, session: BrowserSession): string => `${id}.${session.id}`;

/** Starts linking the signed-in `user` at provider `alias`: a 303 to the provider, or undefined when the user may not link there. */
export async function startAccountLink(services: Services, reply: FastifyReply, realm: Realm, session: BrowserSession, user: User, alias: string): Promise<FastifyReply | undefined> {
  const p = (await linkableProviders(services.store, realm.id, user)).find((x) => x.alias === alias);
  if (!p) return undefined;
  const id = `${PREFIX}${randomToken(18)}`;
  setRealmCookie(reply, services.config, realm.id, LINK_COOKIE, binding(id, session), LINK_LIFETIME_S);
  reply.header('cache-control', 'no-store');
  return reply.redirect(await providerAuthorizationUrl(services, realm, p, { id, params: {} }), 303);
}

type CallbackReq = FastifyRequest<{ Params: { realm: string; alias: string }; Querystring: Record<string, unknown> }>;

/**
 * The provider's answer to a link started on the account page (`id`, from a state whose MAC was checked):
 * the account signed in there is linked to the user of this browser's session, and the account page says
 * how it went. Refused with an error page when this browser did not start it, or its session changed.
 */
export async function finishAccountLink(services: Services, req: CallbackReq, reply: FastifyReply, realm: Realm, id: string): Promise<FastifyReply> {
  const { alias } = req.params;
  const pending = readRealmCookie(req, services.config, realm.id, LINK_COOKIE);
  clearRealmCookie(reply, services.config, realm.id, LINK_COOKIE);
  const session = await browserSession(services, req, realm.id);
  const user = session ? await services.store.users.get(session.userId) : undefined;
  if (!pending || !session || !user || !safeEqual(pending, binding(id, session))) {
    await useTranslator(services, req, reply, realm);
    return renderError(reply, 400, { realmName: realm.displayName ?? realm.id, title: msg('signInOtherBrowserTitle'), description: msg('brokerStateUnknownMessage') });
  }
  const query = (name: string): string | undefined => (typeof req.query[name] === 'string' ? (req.query[name] as string) : undefined);
  const done = (outcome: Outcome): FastifyReply => {
    setRealmCookie(reply, services.config, realm.id, NOTICE_COOKIE, `${outcome}:${alias}`, 60);
    reply.header('cache-control', 'no-store');
    return reply.redirect(`${realmBase(services.config, realm.id)}/account`, 303);
  };
  const refuse = async (reason: string): Promise<FastifyReply> => {
    await services.audit.record({ realmId: realm.id, type: 'FEDERATED_IDENTITY_LINK', outcome: 'failure', clientId: 'account', userId: user.id, username: user.username, ip: req.ip, reason: `identity provider ${alias}, from the account page: ${reason}`.slice(0, 500) });
    req.log.info({ identityProvider: alias, reason }, 'account linking failed');
    return done('failed');
  };
  if (query('error') === 'access_denied') return done('cancelled');
  // Checked again: the provider or the user's roles may have changed while the browser was away.
  const p = await linkingProvider(services.store, realm.id, alias);
  if (!p) return refuse('not enabled');
  if (!(await mayLinkAccounts(services.store, realm.id, user.id))) return refuse('the user has neither manage-account nor manage-account-links');
  let account;
  try {
    account = await providerIdentity(services, realm, p, { id }, { code: query('code'), error: query('error'), errorDescription: query('error_description') });
  } catch (err) {
    if (!(err instanceof BrokerError)) throw err;
    return refuse(err.reason);
  }
  const claims = await claimsToKeep(services.store, p, account.claims);
  return done(await linkProviderAccount(services, { realm, provider: p, user, account: { ...account, ...(claims ? { claims } : {}) }, ip: req.ip, clientId: 'account', by: 'from the account page' }));
}

/** The outcome of a link this browser finished, said once by the account page (then forgotten). */
export async function linkNotice(services: Services, req: FastifyRequest, reply: FastifyReply, realm: Realm): Promise<Text | undefined> {
  const value = readRealmCookie(req, services.config, realm.id, NOTICE_COOKIE);
  if (!value) return undefined;
  clearRealmCookie(reply, services.config, realm.id, NOTICE_COOKIE);
  const colon = value.indexOf(':');
  const outcome = value.slice(0, colon) as Outcome;
  if (colon < 0 || !OUTCOMES.includes(outcome)) return undefined;
  const alias = value.slice(colon + 1);
  const p = await services.store.identityProviders.get(realm.id, alias.slice(0, 255));
  const name = p ? providerName(p) : alias;
  switch (outcome) {
    case 'linked':
    case 'linked-already':
      return msg('accountLinked', name);
    case 'cancelled':
      return msg('accountLinkCancelled', name);
    case 'elsewhere':
      return msg('idpLinkedElsewhereMessage', name);
    case 'taken':
      return msg('idpLinkTakenMessage', name);
    default:
      return msg('accountLinkFailed', name);
  }
}
