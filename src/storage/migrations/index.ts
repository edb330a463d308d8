import type { Migration } from 'kysely';
import * as initial from './2026-11-21T0000_initial.js';
import * as deviceCodes from './2026-11-21T0100_device_codes.js';
import * as revokedAccessTokens from './2026-11-21T0200_revoked_access_tokens.js';
import * as clientOptions from './2026-11-21T0300_client_options.js';
import * as events from './2026-11-21T0400_events.js';
import * as bruteForce from './2026-11-21T0500_brute_force.js';
import * as refreshTokenKeys from './2026-11-23T0100_refresh_token_keys.js';
import * as userNamesAndClientSettings from './2026-11-23T0100_user_names_and_client_settings.js';
import * as webOrigins from './2026-11-23T0200_web_origins.js';
import * as admin from './2026-11-23T0500_admin.js';
import * as clientPkce from './2026-11-23T0501_client_pkce.js';
import * as organizationDetails from './2026-11-23T0600_organization_details.js';
import * as collectorIndexes from './2026-11-23T0700_collector_indexes.js';
import * as interactionAddress from './2026-11-23T0700_interaction_address.js';
import * as leases from './2026-11-23T0700_leases.js';
import * as refreshPerChain from './2026-11-23T0800_refresh_per_chain.js';
import * as storedEventTypes from './2026-11-23T0800_stored_event_types.js';
import * as organizationRequired from './2026-11-23T1000_organization_required.js';
import * as codeResources from './2026-11-25T0100_code_resources.js';
import * as deviceCodeAddress from './2026-11-26T0100_device_code_address.js';
import * as userRequiredActions from './2026-11-26T2300_user_required_actions.js';
import * as userAttributes from './2026-11-27T0800_user_attributes.js';
import * as protocolMappers from './2026-11-27T0810_protocol_mappers.js';
import * as eventRetention from './2026-11-27T0100_event_retention.js';
import * as groups from './2026-11-27T0500_groups.js';
import * as userAttributeIndex from './2026-11-27T1200_user_attribute_index.js';
import * as otpCredentials from './2026-11-27T1300_otp_credentials.js';
import * as recoveryCodes from './2026-11-27T1400_recovery_codes.js';
import * as identityProviders from './2026-11-27T1500_identity_providers.js';
import * as realmEmail from './2026-11-28T2000_realm_email.js';
import * as passwordPolicy from './2026-11-28T2100_password_policy.js';
import * as registration from './2026-11-28T2300_registration.js';
import * as loginOptions from './2026-11-28T2310_login_options.js';
import * as backchannelLogout from './2026-11-28T2320_backchannel_logout.js';
import * as clientJwt from './2026-11-29T0200_client_jwt.js';
import * as pushedAuthorizationRequests from './2026-11-29T0210_pushed_authorization_requests.js';
import * as frontchannelLogout from './2026-11-29T0220_frontchannel_logout.js';
import * as dpop from './2026-11-29T0600_dpop.js';
import * as tokenExchange from './2026-11-29T0610_token_exchange.js';
import * as requestObjects from './2026-11-29T0620_request_objects.js';
import * as webauthn from './2026-11-29T0900_webauthn.js';
import * as webauthnPasswordless from './2026-11-29T0910_webauthn_passwordless.js';
import * as requiredActionSettings from './2026-11-29T1140_required_action_settings.js';
import * as userStorageProviders from './2026-11-29T0930_user_storage_providers.js';
import * as ldapMapperLinks from './2026-11-29T1130_ldap_mapper_links.js';
import * as organizationInvitations from './2026-11-29T1150_organization_invitations.js';
import * as organizationRedirectUrl from './2026-11-29T1700_organization_redirect_url.js';
import * as clientOptionalScopes from './2026-11-29T2200_client_optional_scopes.js';
import * as identityProviderMappers from './2026-11-29T2300_identity_provider_mappers.js';
import * as roleScopeMappings from './2026-11-30T0100_role_scope_mappings.js';
import * as roleComposites from './2026-11-30T0200_role_composites.js';
import * as defaultRole from './2026-11-30T0300_default_role.js';
import * as clientRegistration from './2026-11-30T0400_client_registration.js';
import * as localization from './2026-11-30T0500_localization.js';
import * as sessionImpersonator from './2026-12-02T0100_session_impersonator.js';
import * as clientRotatedSecret from './2026-12-02T0500_client_rotated_secret.js';
import * as clientNotBefore from './2026-12-02T0600_client_not_before.js';
import * as editUsernameAllowed from './2026-12-02T0700_edit_username_allowed.js';
import * as sessionClient from './2026-12-02T0800_session_client.js';
import * as brokerReviewProfile from './2026-12-02T0900_broker_review_profile.js';

/** Every migration, by name; names sort in the order they apply. */
export const MIGRATIONS: Record<string, Migration> = {
  '2026-11-21T0000_initial': initial,
  '2026-11-21T0100_device_codes': deviceCodes,
  '2026-11-21T0200_revoked_access_tokens': revokedAccessTokens,
  '2026-11-21T0300_client_options': clientOptions,
  '2026-11-21T0400_events': events,
  '2026-11-21T0500_brute_force': bruteForce,
  '2026-11-23T0100_refresh_token_keys': refreshTokenKeys,
  '2026-11-23T0100_user_names_and_client_settings': userNamesAndClientSettings,
  '2026-11-23T0200_web_origins': webOrigins,
  '2026-11-23T0500_admin': admin,
  '2026-11-23T0501_client_pkce': clientPkce,
  '2026-11-23T0600_organization_details': organizationDetails,
  '2026-11-23T0700_collector_indexes': collectorIndexes,
  '2026-11-23T0700_interaction_address': interactionAddress,
  '2026-11-23T0700_leases': leases,
  '2026-11-23T0800_refresh_per_chain': refreshPerChain,
  '2026-11-23T0800_stored_event_types': storedEventTypes,
  '2026-11-23T1000_organization_required': organizationRequired,
  '2026-11-25T0100_code_resources': codeResources,
  '2026-11-26T0100_device_code_address': deviceCodeAddress,
  '2026-11-26T2300_user_required_actions': userRequiredActions,
  '2026-11-27T0100_event_retention': eventRetention,
  '2026-11-27T0500_groups': groups,
  '2026-11-27T0800_user_attributes': userAttributes,
  '2026-11-27T0810_protocol_mappers': protocolMappers,
  '2026-11-27T1200_user_attribute_index': userAttributeIndex,
  '2026-11-27T1300_otp_credentials': otpCredentials,
  '2026-11-27T1400_recovery_codes': recoveryCodes,
  '2026-11-27T1500_identity_providers': identityProviders,
  '2026-11-28T2000_realm_email': realmEmail,
  '2026-11-28T2100_password_policy': passwordPolicy,
  '2026-11-28T2300_registration': registration,
  '2026-11-28T2310_login_options': loginOptions,
  '2026-11-28T2320_backchannel_logout': backchannelLogout,
  '2026-11-29T0200_client_jwt': clientJwt,
  '2026-11-29T0210_pushed_authorization_requests': pushedAuthorizationRequests,
  '2026-11-29T0220_frontchannel_logout': frontchannelLogout,
  '2026-11-29T0600_dpop': dpop,
  '2026-11-29T0610_token_exchange': tokenExchange,
  '2026-11-29T0620_request_objects': requestObjects,
  '2026-11-29T0900_webauthn': webauthn,
  '2026-11-29T0910_webauthn_passwordless': webauthnPasswordless,
  '2026-11-29T0930_user_storage_providers': userStorageProviders,
  '2026-11-29T1130_ldap_mapper_links': ldapMapperLinks,
  '2026-11-29T1140_required_action_settings': requiredActionSettings,
  '2026-11-29T1150_organization_invitations': organizationInvitations,
  '2026-11-29T1700_organization_redirect_url': organizationRedirectUrl,
  '2026-11-29T2200_client_optional_scopes': clientOptionalScopes,
  '2026-11-29T2300_identity_provider_mappers': identityProviderMappers,
  '2026-11-30T0100_role_scope_mappings': roleScopeMappings,
  '2026-11-30T0200_role_composites': roleComposites,
  '2026-11-30T0300_default_role': defaultRole,
  '2026-11-30T0400_client_registration': clientRegistration,
  '2026-11-30T0500_localization': localization,
  '2026-12-02T0100_session_impersonator': sessionImpersonator,
  '2026-12-02T0500_client_rotated_secret': clientRotatedSecret,
  '2026-12-02T0600_client_not_before': clientNotBefore,
  '2026-12-02T0700_edit_username_allowed': editUsernameAllowed,
  '2026-12-02T0800_session_client': sessionClient,
  '2026-12-02T0900_broker_review_profile': brokerReviewProfile,
};
