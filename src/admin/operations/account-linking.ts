import type { Services } from '../../services.js';
import type { IdentityProvider, Realm, User } from '../../storage/types.js';
import { ConflictError } from '../validation.js';
import { linkAfterSignIn, type ProviderAccount } from './identity-providers.js';

export type AccountLinking = 'linked' | 'linked-already' | 'elsewhere' | 'taken';

/**
 * Keycloak's client-initiated account linking (kc_action=idp_link:<alias>): the account `a` the provider
 * just signed in is linked to the signed-in `user`. Linked to them already: nothing to do. Linked to
 * another user (`elsewhere`), or the user already linked to another account of this provider (`taken`):
 * refused, nothing changes. Recorded as FEDERATED_IDENTITY_LINK (Keycloak's), a refusal as a failure.
 */
export async function linkProviderAccount(services: Services, input: { realm: Realm; provider: IdentityProvider; user: User; account: ProviderAccount; ip: string; clientId: string }): Promise<AccountLinking> {
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
  await services.audit.record({ ...who, type: 'FEDERATED_IDENTITY_LINK', outcome: ok ? 'success' : 'failure', reason: `identity provider ${p.alias}, asked for by the client (kc_action=idp_link)${why}` });
  return outcome;
}
