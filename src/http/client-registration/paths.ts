/** Keycloak's paths of the OpenID Connect client registration provider (RFC 7591) and a client's registration (RFC 7592). */
export const CLIENT_REGISTRATION_PATH = '/auth/realms/:realm/clients-registrations/openid-connect';
export const CLIENT_CONFIGURATION_PATH = `${CLIENT_REGISTRATION_PATH}/:clientId`;
