/** Keycloak's path of the OpenID Connect client registration provider (RFC 7591), under a realm's issuer. */
export const REGISTRATION_SUFFIX = '/clients-registrations/openid-connect';
/** The routes of the registration endpoint (RFC 7591) and of a client's registration (RFC 7592). */
export const CLIENT_REGISTRATION_PATH = `/auth/realms/:realm${REGISTRATION_SUFFIX}`;
export const CLIENT_CONFIGURATION_PATH = `${CLIENT_REGISTRATION_PATH}/:clientId`;
