/** Prefix of the admin REST API and console, as Keycloak's: {AUTH_URL}/auth/admin/... */
export const ADMIN_PREFIX = '/auth/admin';
