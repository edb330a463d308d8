import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { IdentityProvider, Realm } from '../../storage/types.js';
import { BrokerError, type BrokerRequest, interactionOfState, providerAuthorizationUrl, providerIdentity } from '../../oauth/broker.js';
import { brokeredUser, type ProviderAccount } from '../../admin/operations/identity-providers.js';
import { profileForm, reviewProblems } from '../../admin/operations/profile-actions.js';
import { problemTexts } from './problems.js';
import { claimsToKeep } from '../../admin/operations/identity-provider-mappers.js';
import { nextStep } from '../../oauth/authorize/interaction.js';
import { msg, type Text } from '../../i18n/translator.js';
import { useTranslator } from '../i18n.js';
import { BAD_FORM, FORM_EXPIRED, advance, checkCsrf, completeSignIn, endAppAction, field, load, render, type Loaded, type Req } from './routes.js';
import { linkProviderAccount, linkingProvider } from '../../admin/operations/account-linking.js';
import { providerName } from '../../oauth/social-providers.js';
import { htmlErrorHandler, renderError } from './render.js';
import { finishAccountLink, isAccountLink } from '../account/linking.js';

/**
 * Identity brokering's pages: the login page's "sign in with" buttons start a sign-in at the provider;
 * the provider sends the browser back to /broker/{alias}/endpoint (Keycloak's path), where the answer is
 * checked (src/oauth/broker.ts) and the local user found, made, or asked to prove an existing account.
 */

/** An enabled provider of the realm; link-only ones are never started from a login page. */
async function usableProvider(services: Services, realmId: string, alias: string | undefined): Promise<IdentityProvider | undefined> {
  if (!alias || alias.length > 255) return undefined;
  const p = await services.store.identityProviders.get(realmId, alias);
  return p && p.enabled && !p.linkOnly ? p : undefined;
}

/** Where the browser goes to sign in at the provider: its authorization endpoint (a 303). */
export async function redirectToProvider(services: Services, reply: FastifyReply, realm: Realm, p: IdentityProvider, ia: BrokerRequest): Promise<FastifyReply> {
  reply.header('cache-control', 'no-store');
  return reply.redirect(await providerAuthorizationUrl(services, realm, p, ia), 303);
}

/** keycloak-js idpHint (kc_idp_hint): an enabled provider of that alias is gone to at once; an unknown one shows the login page. */
export async function hintedProvider(services: Services, realmId: string, hint: string | undefined): Promise<IdentityProvider | undefined> {
  return usableProvider(services, realmId, hint);
}

type CallbackReq = FastifyRequest<{ Params: { realm: string; alias: string }; Querystring: Record<string, unknown> }>;

const query = (req: CallbackReq, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === 'string' ? v : undefined;
};

export async function brokerRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));

  /**
   * The provider's answer to kc_action=idp_link: its account is linked to the signed-in user, and the
   * client learns kc_action_status=success. Cancelled at the provider (access_denied): back with
   * cancelled. Refused (a bad answer, an account linked to someone else): an error page, as Keycloak's.
   */
  async function linkAccount(req: CallbackReq, reply: FastifyReply, l: Loaded, alias: string): Promise<FastifyReply> {
    const p = await linkingProvider(services.store, l.realm.id, alias);
    const user = l.ia.userId ? await services.store.users.get(l.ia.userId) : undefined;
    const refuse = async (userMessage: Text, reason: string): Promise<FastifyReply> => {
      await services.audit.record({ realmId: l.realm.id, type: 'FEDERATED_IDENTITY_LINK', outcome: 'failure', clientId: l.client.clientId, userId: user?.id ?? null, username: user?.username ?? null, ip: req.ip, reason: `identity provider ${alias}, asked for by the client (kc_action=idp_link): ${reason}`.slice(0, 500) });
      return renderError(reply, 400, { realmName: l.realmName, title: msg('idpLinkTitle'), description: userMessage });
    };
    if (!p || !user) return refuse(msg('identityProviderUnavailableMessage'), 'not enabled');
    if (query(req, 'error') === 'access_denied') return endAppAction(services, reply, l, 'cancelled');
    let account;
    try {
      account = await providerIdentity(services, l.realm, p, l.ia, { code: query(req, 'code'), error: query(req, 'error'), errorDescription: query(req, 'error_description') });
    } catch (err) {
      if (!(err instanceof BrokerError)) throw err;
      return refuse(err.userMessage, err.reason);
    }
    const claims = await claimsToKeep(services.store, p, account.claims);
    const outcome = await linkProviderAccount(services, { realm: l.realm, provider: p, user, account: { ...account, ...(claims ? { claims } : {}) }, ip: req.ip, clientId: l.client.clientId, by: 'asked for by the client (kc_action=idp_link)' });
    if (outcome === 'elsewhere') return renderError(reply, 400, { realmName: l.realmName, title: msg('idpLinkTitle'), description: msg('idpLinkedElsewhereMessage', providerName(p)) });
    if (outcome === 'taken') return renderError(reply, 400, { realmName: l.realmName, title: msg('idpLinkTitle'), description: msg('idpLinkTakenMessage', providerName(p)) });
    return endAppAction(services, reply, l, 'success');
  }

  /** A sign-in through provider `alias` that failed: an event, a log line, the login page saying why. */
  function failure(req: FastifyRequest, reply: FastifyReply, l: Loaded, alias: string): (userMessage: Text, reason: string) => Promise<FastifyReply> {
    return async (userMessage, reason) => {
      await services.audit.record({ realmId: l.realm.id, type: 'IDENTITY_PROVIDER_LOGIN_ERROR', outcome: 'failure', clientId: l.client.clientId, ip: req.ip, reason: `identity provider ${alias}: ${reason}`.slice(0, 500) });
      req.log.info({ identityProvider: alias, reason }, 'identity provider sign-in failed');
      return render(services, reply, l, { kind: 'login' }, { error: userMessage, status: 400 });
    };
  }

  /** Whether the provider's account must be reviewed first: it would make a new user (no link yet) that lacks what UPDATE_PROFILE requires. */
  async function needsReview(realm: Realm, p: IdentityProvider, a: ProviderAccount): Promise<boolean> {
    if (p.linkOnly || realm.brokerReviewProfile === 'off' || (await services.store.identityProviders.findLink(realm.id, p.alias, a.id))) return false;
    if (realm.brokerReviewProfile === 'on') return true;
    return (await reviewProblems(services, realm, { email: a.email ?? '', firstName: a.firstName ?? '', lastName: a.lastName ?? '' })).length > 0;
  }

  /** The provider's account, complete: its user found and signed in, made and signed in, or an existing user asked to prove the account theirs. */
  async function signInWith(req: FastifyRequest, reply: FastifyReply, l: Loaded, p: IdentityProvider, identity: ProviderAccount): Promise<FastifyReply> {
    const { alias } = p;
    const found = await brokeredUser(services.store, p, identity);
    if (found.kind === 'refused') return failure(req, reply, l, alias)(msg('identityProviderAccountRefusedMessage'), found.reason);
    if (found.kind === 'existing') {
      // The claims the provider's mappers read wait with the link (they apply once the owner proves it).
      const claims = await claimsToKeep(services.store, p, identity.claims);
      await services.store.interactions.update(l.ia.id, { params: { ...l.ia.params, brokerLink: { alias, id: identity.id, username: identity.username.slice(0, 255), userId: found.user.id, by: found.by, ...(claims ? { claims } : {}) } } });
      return advance(services, reply, l);
    }
    const { user } = found;
    const who = { realmId: l.realm.id, clientId: l.client.clientId, userId: user.id, username: user.username, ip: req.ip, reason: `identity provider ${alias}` };
    if (found.kind === 'created') await services.audit.record({ ...who, type: 'IDENTITY_PROVIDER_FIRST_LOGIN', outcome: 'success' });
    await services.audit.record({ ...who, type: 'IDENTITY_PROVIDER_LOGIN', outcome: 'success' });
    // The provider authenticated the user (Keycloak's default post-broker flow asks nothing more); the
    // required actions still come before the session.
    await services.store.interactions.update(l.ia.id, { userId: user.id, sessionId: null, secondFactor: true });
    return completeSignIn(services, req, reply, { ...l, ia: { ...l.ia, userId: user.id } }, user.id);
  }

  app.post('/auth/realms/:realm/login-actions/:id/broker', async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const p = await usableProvider(services, l.realm.id, field(req, 'provider'));
    const step = await nextStep(services, l.realm, l.client, l.ia);
    // Only from the login page: a user half-way through another sign-in goes on where they are.
    if (!p || step.kind !== 'login') return advance(services, reply, l);
    return redirectToProvider(services, reply, l.realm, p, l.ia);
  });

  app.get('/auth/realms/:realm/broker/:alias/endpoint', async (req: CallbackReq, reply) => {
    const realm = await services.cache.realm(req.params.realm);
    if (!realm) return renderError(reply, 404, { realmName: 'Realmgate', title: msg('unknownRealmTitle'), description: msg('unknownRealmMessage') });
    const realmName = realm.displayName ?? realm.id;
    const { alias } = req.params;
    const id = await interactionOfState(services, realm.id, alias, query(req, 'state'));
    if (!id) {
      await useTranslator(services, req, reply, realm);
      return renderError(reply, 400, { realmName, title: msg('signInOtherBrowserTitle'), description: msg('brokerStateUnknownMessage') });
    }
    if (isAccountLink(id)) return finishAccountLink(services, req, reply, realm, id);
    const l = await load(services, req, reply, { realm: realm.id, id });
    if (!l) return reply;
    const step = await nextStep(services, l.realm, l.client, l.ia);
    if (step.kind === 'idp-link' && step.alias === alias) return linkAccount(req, reply, l, alias);
    const p = await usableProvider(services, realm.id, alias);
    const fail = failure(req, reply, l, alias);
    if (!p) return fail(msg('identityProviderUnavailableMessage'), 'not enabled');
    if (step.kind !== 'login') return advance(services, reply, l);
    let identity;
    try {
      identity = await providerIdentity(services, realm, p, l.ia, { code: query(req, 'code'), error: query(req, 'error'), errorDescription: query(req, 'error_description') });
    } catch (err) {
      if (!(err instanceof BrokerError)) throw err;
      return fail(err.userMessage, err.reason);
    }
    // Keycloak's first broker login "Review Profile": in its default mode (missing) an account that would
    // make a user without an email or names is completed by the user first; "on" shows every first
    // account, "off" none (the user is made with what the provider gave).
    if (await needsReview(l.realm, p, identity)) {
      const claims = await claimsToKeep(services.store, p, identity.claims);
      // What the provider gave, as the form shows it (within its fields' lengths).
      const given: { email?: string; firstName?: string; lastName?: string } = {};
      for (const [key, value, max] of [['email', identity.email, 320], ['firstName', identity.firstName, 255], ['lastName', identity.lastName, 255]] as const) if (value) given[key] = value.slice(0, max);
      const brokerReview = { alias, id: identity.id, username: identity.username.slice(0, 255), ...given, ...(claims ? { claims } : {}) };
      await services.store.interactions.update(l.ia.id, { params: { ...l.ia.params, brokerReview } });
      return advance(services, reply, l);
    }
    return signInWith(req, reply, l, p, identity);
  });

  // The review page's form: the values checked as UPDATE_PROFILE checks them (another user's email is
  // that user's account: linked once they prove it), then the sign-in goes on as from the provider.
  app.post('/auth/realms/:realm/login-actions/:id/review-profile', async (req: Req, reply) => {
    const l = await load(services, req, reply);
    if (!l) return reply;
    if (!checkCsrf(req, l.ia)) return renderError(reply, 403, { realmName: l.realmName, title: FORM_EXPIRED, description: BAD_FORM });
    const review = l.ia.params.brokerReview;
    const step = await nextStep(services, l.realm, l.client, l.ia);
    if (!review || l.ia.userId || step.kind !== 'review-profile') return advance(services, reply, l);
    // Cancel: back to the login page, nothing made (the user may sign in otherwise).
    if (field(req, 'cancel')) {
      const { brokerReview: _dropped, ...rest } = l.ia.params;
      await services.store.interactions.update(l.ia.id, { params: rest });
      return advance(services, reply, { ...l, ia: { ...l.ia, params: rest } });
    }
    const { values, shown } = profileForm((name) => field(req, name));
    const problems = await reviewProblems(services, l.realm, values);
    if (problems.length > 0) return render(services, reply, l, step, { status: 400, values: shown, errors: problemTexts(problems) });
    const { brokerReview: _done, ...params } = l.ia.params;
    await services.store.interactions.update(l.ia.id, { params });
    const p = await usableProvider(services, l.realm.id, review.alias);
    const at = { ...l, ia: { ...l.ia, params } };
    if (!p) return failure(req, reply, at, review.alias)(msg('identityProviderUnavailableMessage'), 'not enabled');
    const email = values.email.trim().toLowerCase();
    const identity: ProviderAccount = {
      id: review.id,
      username: review.username,
      email,
      firstName: values.firstName.trim(),
      lastName: values.lastName.trim(),
      // A changed email is the user's word, not the provider's: never verified by the provider's trustEmail.
      emailTyped: email !== (review.email ?? '').trim().toLowerCase(),
      ...(review.claims ? { claims: review.claims } : {}),
    };
    return signInWith(req, reply, at, p, identity);
  });
}
