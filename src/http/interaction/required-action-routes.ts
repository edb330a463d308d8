import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Services } from '../../services.js';
import type { Step } from '../../oauth/authorize/interaction.js';
import { denyRequest } from '../../oauth/authorize/interaction.js';
import { answerTerms, completeProfileUpdate, profileForm, termsAccepted } from '../../admin/operations/profile-actions.js';
import { termsText } from '../../admin/required-actions.js';
import { deleteAccountPage, deleteCredentialPage, idpLinkPage, termsPage, updateProfilePage, type ProfileValues } from '../../views/required-action-pages.js';
import { deleteOwnAccount, mayDeleteOwnAccount } from '../../admin/operations/account-deletion.js';
import { deleteOwnCredential, type OwnCredential } from '../../admin/operations/credential-deletion.js';
import { msg, t } from '../../i18n/translator.js';
import { SESSION_COOKIE, clearRealmCookie, clearSessionStateCookie } from '../cookies.js';
import { advance, completeSignIn, endAppAction, endPreviousSession, field, render, stepForm, type Loaded, type Req } from './routes.js';
import { htmlErrorHandler, interactionUrl, sendAccountDeleted, sendPage } from './render.js';
import { redirectToProvider } from './broker-routes.js';
import { linkingProvider } from '../../admin/operations/account-linking.js';
import type { User } from '../../storage/types.js';
import type { Text } from '../../i18n/translator.js';
import { problemTexts } from './problems.js';

/**
 * Keycloak's UPDATE_PROFILE, TERMS_AND_CONDITIONS and delete_account required actions as steps of the
 * sign-in (and kc_action=UPDATE_PROFILE, delete_account or idp_link:<alias>, cancellable); the rules are
 * in src/admin/operations/profile-actions.ts, account-deletion.ts and account-linking.ts.
 */

type PageContext = { realmName: string; clientName: string; csrf: string };

const valuesOf = (user: User): ProfileValues => ({ email: user.email ?? '', firstName: user.firstName ?? '', lastName: user.lastName ?? '' });

/** The page of an UPDATE_PROFILE or TERMS_AND_CONDITIONS step: the user's values, or those typed with the errors. */
export async function renderRequiredActionStep(
  services: Services,
  reply: FastifyReply,
  l: Loaded,
  step: Extract<Step, { kind: 'update-profile' | 'terms' | 'delete-account' | 'idp-link' | 'delete-credential' }>,
  extra: { ctx: PageContext; status?: number; values?: ProfileValues; errors?: readonly Text[]; error?: Text },
): Promise<FastifyReply> {
  const base = interactionUrl(l.realm.id, l.ia.id);
  if (step.kind === 'delete-credential') {
    const name = credentialName(step.credential);
    return sendPage(reply, extra.status ?? 200, () => deleteCredentialPage({ ...extra.ctx, action: `${base}/delete-credential`, username: step.username, name, removable: step.removable, ...(extra.error ? { error: extra.error } : {}) }));
  }
  if (step.kind === 'idp-link') return sendPage(reply, extra.status ?? 200, () => idpLinkPage({ ...extra.ctx, action: `${base}/idp-link`, username: step.username, provider: step.provider }));
  if (step.kind === 'delete-account') {
    // Keycloak shows "deletingAccountForbidden" at once to a user without the account client's delete-account role.
    const user = l.ia.userId ? await services.store.users.get(l.ia.userId) : undefined;
    const error = extra.error ?? (user && !(await mayDeleteOwnAccount(services.store, l.realm, user)) ? msg('deletingAccountForbidden') : undefined);
    return sendPage(reply, extra.status ?? (error ? 403 : 200), () => deleteAccountPage({ ...extra.ctx, action: `${base}/delete-account`, username: step.username, cancellable: step.aia === true, ...(error ? { error } : {}) }));
  }
  if (step.kind === 'terms') return sendPage(reply, extra.status ?? 200, () => termsPage({ ...extra.ctx, action: `${base}/terms`, username: step.username, text: termsText(l.realm) }));
  const user = l.ia.userId ? await services.store.users.get(l.ia.userId) : undefined;
  const values = extra.values ?? (user ? valuesOf(user) : { email: '', firstName: '', lastName: '' });
  return sendPage(
    reply,
    extra.status ?? 200,
    () => updateProfilePage({ ...extra.ctx, action: `${base}/update-profile`, username: step.username, values, cancellable: step.aia === true, readOnly: Boolean(user?.federationLink), ...(extra.errors ? { errors: extra.errors } : {}) }),
  );
}

/** What the delete_credential page calls the credential: its label, else what it is, in the page's language. */
function credentialName(c: OwnCredential): string {
  if (c.label) return c.label;
  switch (c.kind) {
    case 'password':
      return t('password');
    case 'otp':
      return t('accountAuthenticatorApp');
    case 'webauthn':
      return t('accountSecurityKey');
    case 'webauthn-passwordless':
      return t('accountPasskey');
    case 'recovery-codes':
      return t('recoveryCodesTitle');
  }
}

/** After an action's form: a user who came with a session keeps it; one who typed their password now gets one (when nothing else is left). */
async function done(services: Services, req: Req, reply: FastifyReply, l: Loaded, userId: string): Promise<FastifyReply> {
  if (l.ia.sessionId) return advance(services, reply, l);
  return completeSignIn(services, req, reply, l, userId);
}

export async function requiredActionRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(htmlErrorHandler(services));
  const base = '/auth/realms/:realm/login-actions/:id';

  app.post(`${base}/update-profile`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'update-profile');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    if (step.aia && field(req, 'cancel')) return endAppAction(services, reply, l, 'cancelled');
    const { values, shown } = profileForm((name) => field(req, name));
    const errors = await completeProfileUpdate(services, { realm: l.realm, user, values, ip: req.ip, clientId: l.client.clientId });
    if (errors.length > 0) return render(services, reply, l, step, { status: 400, values: shown, errors: problemTexts(errors) });
    if (step.aia) return endAppAction(services, reply, l, 'success');
    return done(services, req, reply, l, user.id);
  });

  // Keycloak's delete_account: confirmed, the account goes (the session, the cookies and this sign-in with
  // it) and a page says so; the client is not sent back to, as in Keycloak. Cancelled (kc_action only):
  // back to the client with kc_action_status=cancelled.
  app.post(`${base}/delete-account`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'delete-account');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    if (step.aia && field(req, 'cancel')) return endAppAction(services, reply, l, 'cancelled');
    if (!field(req, 'confirm')) return render(services, reply, l, step);
    const outcome = await deleteOwnAccount(services, { realm: l.realm, user, ip: req.ip, clientId: l.client.clientId, where: step.aia ? 'asked for by the client (kc_action)' : 'as a required action at sign-in' });
    if (outcome !== 'deleted') return render(services, reply, l, step, { status: 403, error: msg(outcome === 'federated' ? 'deleteAccountFederatedMessage' : 'deletingAccountForbidden') });
    await services.store.interactions.delete(l.ia.id);
    return sendAccountDeleted(reply, services.config, l.realm.id, l.realmName);
  });

  // Keycloak's idp_link (kc_action=idp_link:<alias>): Continue goes to the provider (its answer comes back
  // to the broker endpoint, src/http/interaction/broker-routes.ts, which links the account); Cancel goes
  // back to the client with kc_action_status=cancelled.
  app.post(`${base}/idp-link`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'idp-link');
    if (!('step' in f)) return f;
    const { l, step } = f;
    if (field(req, 'cancel')) return endAppAction(services, reply, l, 'cancelled');
    const provider = await linkingProvider(services.store, l.realm.id, step.alias);
    if (!provider) return advance(services, reply, l);
    return redirectToProvider(services, reply, l.realm, provider, l.ia);
  });

  // Keycloak's delete_credential (kc_action=delete_credential:<id>): Delete removes it and goes back with
  // kc_action_status=success; Cancel with cancelled. The password cannot be deleted (only Cancel is offered).
  app.post(`${base}/delete-credential`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'delete-credential');
    if (!('step' in f)) return f;
    const { l, step, user } = f;
    if (field(req, 'cancel')) return endAppAction(services, reply, l, 'cancelled');
    if (!field(req, 'confirm') || !step.removable) return render(services, reply, l, step);
    const deleted = await deleteOwnCredential(services, { user, credential: step.credential, ip: req.ip, clientId: l.client.clientId });
    // Gone meanwhile (another tab, an administrator): what was asked is done.
    if (!deleted) req.log.info({ credential: step.credential.id }, 'delete_credential: the credential was gone already');
    return endAppAction(services, reply, l, 'success');
  });

  app.post(`${base}/terms`, async (req: Req, reply) => {
    const f = await stepForm(services, req, reply, 'terms');
    if (!('step' in f)) return f;
    const { l, user } = f;
    const accepted = termsAccepted((name) => field(req, name));
    await answerTerms(services, { realm: l.realm, user, accepted, ip: req.ip, clientId: l.client.clientId });
    if (accepted) return done(services, req, reply, l, user.id);
    // Keycloak: a declined required action fails the sign-in; the client gets access_denied, the
    // browser keeps no session (one it came with ends too).
    await endPreviousSession(services, req, l);
    clearRealmCookie(reply, services.config, l.realm.id, SESSION_COOKIE);
    clearSessionStateCookie(reply, services.config, l.realm.id);
    return render(services, reply, l, await denyRequest(services, l.realm, l.ia));
  });
}
