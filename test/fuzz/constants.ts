/** Constants shared by the fuzz suite's harness and generators. */

/** The password of the decoy users (deep, solo, multi, loner); never alice's. */
export const FUZZ_PASSWORD = 'fuzz-user-password-42';
/** Keycloak's out-of-band redirect URI: the code is shown on {APP_URL}/authentication_code. */
export const OOB = 'urn:ietf:wg:oauth:2.0:oob';
/** The PKCE verifier of the decoy flows of the public client. */
export const DECOY_VERIFIER = 'decoy-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
