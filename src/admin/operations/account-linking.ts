import type { Services } from '../../services.js';
import type { Store } from '../../storage/store.js';
import type { IdentityProvider, Realm, User } from '../../storage/types.js';
import { ConflictError } from '../validation.js';
import { holdsAccountRole } from './account-deletion.js';
import { linkAfterSignIn, type ProviderAccount } from './identity-providers.js';

/** Keycloak's account client roles that let a user link their account at a provider (where the realm has them). */
export const LINKING_ROLES = ['manage-account', 'manage-account-links'] as const;

/** Whether `user` may link their account at a provider: Keycloak's manage-account or manage-account-links role, where the realm has them. */
export function mayLinkAccounts(store: Store, realmId: string, userId: string): Promise<boolean> {
  return holdsAccountRole(store, realmId, userId, LINKING_ROLES);
}

/** An enabled provider of the realm to link an account at (kc_action=idp_link, the account page): a link-only one too. */
export async function linkingProvider(store: Store, realmId: string, alias: string): Promise<IdentityProvider | undefined> {
  const p = alias.length <= 255 ? await store.identityProviders.get(realmId, alias) : undefined;
  return p && p.enabled ? p : undefined;
}

/**
 * The providers `user` can link an account at from the account page (Keycloak's account console "Linked
 * accounts"): the realm's enabled ones (link-only too: that is what they are for) the user has no link
 * with; none without the linking roles.
 */
export async function linkableProviders(store: Store, realmId: string, user: Pick<User, 'id'>): Promise<IdentityProvider[]> {
  const [providers, links] = await Promise.all([store.identityProviders.list(realmId), store.identityProviders.links(user.id)]);
  const candidates = providers.filter((p) => p.enabled && !links.some((l) => l.identityProvider === p.alias));
  return candidates.length > 0 && (await mayLinkAccounts(store, realmId, user.id)) ? candidates : [];
}

export type AccountLinking = 'linked' | 'linked-already' | 'elsewhere' | 'taken';

/**
 * Account linking, asked for by a client (Keycloak's kc_action=idp_link:<alias>) or on the account page
 * (`by` says which, for the event): the account `a` the provider just signed in is linked to the signed-in `user`. Linked to them already: nothing to do. Linked to
 * another user (`elsewhere`), or the user already linked to another account of this provider (`taken`):
 * refused, nothing changes. Recorded as FEDERATED_IDENTITY_LINK (Keycloak's), a refusal as a failure.
 */
export async function linkProviderAccount(services: Services, input: { realm: Realm; provider: IdentityProvider; user: User; account: ProviderAccount; ip: string; clientId: string; by: string }): Promise<AccountLinking> {
  const { realm, provider: p, user, account: a } = input;
  const who = { realmId: realm.id, clientId: input.clientId, userId: user.id, username: user.username, ip: input.ip };
  const existing = await services.store.identityProviders.findLink(realm.id, p.alias, a.id);
  let outcome: AccountLinking;
  if (existing) outcome = existing.userId === user.id ? 'linked-already' : 'elsewhere';
  else {
    try {
      await linkAfterSignIn(services.store, p, user, { id: a.id, username: a.username, ...(a.claims ? { claims: a.claims } : {}) });
      outcome = 'linked';
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      outcome = (await services.store.identityProviders.findLink(realm.id, p.alias, a.id))?.userId === user.id ? 'linked-already' : 'taken';
    }
  }
  const ok = outcome === 'linked' || outcome === 'linked-already';
  const why = outcome === 'elsewhere' ? ': the account there is linked to another user' : outcome === 'taken' ? ': the user is linked to another account there' : outcome === 'linked-already' ? ' (linked already)' : '';
  await services.audit.record({ ...who, type: 'FEDERATED_IDENTITY_LINK', outcome: ok ? 'success' : 'failure', reason: `identity provider ${p.alias}, ${input.by}${why}` });
  return outcome;
}
