import type { Store } from '../../storage/store.js';
import type { IdentityProvider } from '../../storage/types.js';
import { ConflictError, NotFound, ValidationError } from '../validation.js';
import { requireRealm, type Actor } from './common.js';
import { ORG_DOMAIN_KEY, updateIdentityProvider, type ProviderFields } from './identity-providers.js';

/**
 * An organization's identity providers (Keycloak 26's OrganizationIdentityProvidersResource): a provider
 * belongs to at most one organization, through its organizationId. Linking and unlinking change that
 * one field through updateIdentityProvider, so a link is checked (the provider's kc.org.domain must be a
 * domain of the organization) and recorded (an UPDATE admin event of the provider) as any change of it.
 */

/** The organization's providers, by alias. */
export async function organizationProviders(store: Store, realmId: string, organizationId: string): Promise<IdentityProvider[]> {
  await requireRealm(store, realmId);
  return (await store.identityProviders.list(realmId)).filter((p) => p.organizationId === organizationId);
}

/** The provider of the organization with this alias; NotFound when there is none or it is not the organization's. */
export async function organizationProvider(store: Store, realmId: string, organizationId: string, alias: string): Promise<IdentityProvider> {
  await requireRealm(store, realmId);
  const p = await store.identityProviders.get(realmId, alias);
  if (!p || p.organizationId !== organizationId) throw new NotFound('Identity provider not associated with the organization');
  return p;
}

/** The fields of a stored provider, as updateIdentityProvider's replacement takes them (its secret stays). */
function fieldsOf(p: IdentityProvider): ProviderFields {
  return { alias: p.alias, providerId: p.providerId, displayName: p.displayName, enabled: p.enabled, hideOnLogin: p.hideOnLogin, trustEmail: p.trustEmail, linkOnly: p.linkOnly, organizationId: p.organizationId, config: { ...p.config } };
}

/**
 * Links a provider, named by alias or internal id as Keycloak's getByIdOrAlias, to the organization.
 * Keycloak's answers: an unknown provider or one of another organization is a ValidationError (400), one
 * linked to this organization already a ConflictError (409).
 */
export async function linkOrganizationProvider(store: Store, actor: Actor, realmId: string, organizationId: string, aliasOrId: string): Promise<IdentityProvider> {
  await requireRealm(store, realmId);
  const p = (await store.identityProviders.get(realmId, aliasOrId)) ?? (await store.identityProviders.list(realmId)).find((x) => x.id === aliasOrId);
  if (!p) throw new ValidationError('Identity provider not found with the given alias');
  if (p.organizationId === organizationId) throw new ConflictError('Identity provider already associated to the organization');
  if (p.organizationId !== null) throw new ValidationError('Identity provider already associated with a different organization');
  return updateIdentityProvider(store, actor, realmId, p.alias, { ...fieldsOf(p), organizationId }, { replace: true });
}

/**
 * Unlinks a provider from the organization; the provider stays. As Keycloak, the domain it had in the
 * organization (kc.org.domain) goes with the link.
 */
export async function unlinkOrganizationProvider(store: Store, actor: Actor, realmId: string, organizationId: string, alias: string): Promise<IdentityProvider> {
  const p = await store.identityProviders.get(realmId, alias);
  if (!p || p.organizationId !== organizationId) throw new NotFound('Identity provider not found with the given alias');
  const { [ORG_DOMAIN_KEY]: _domain, ...config } = p.config;
  return updateIdentityProvider(store, actor, realmId, p.alias, { ...fieldsOf(p), organizationId: null, config }, { replace: true });
}
