import { WEBAUTHN_POLICY_DEFAULTS } from '../admin/webauthn-policy.js';
import type { BrokerReviewProfile } from '../storage/types.js';
/**
 * Every setting Realmgate reads from its environment, with its default and a one-line description.
 * docs/configuration.md is generated from this table (`npm run docs:config`).
 */
export interface SettingSpec {
  env: string;
  default: string | undefined;
  description: string;
}

export const SETTINGS = {
  port: { env: 'PORT', default: '8080', description: 'TCP port the server listens on.' },
  host: { env: 'HOST', default: '127.0.0.1', description: 'Interface the server binds to (0.0.0.0 for all).' },
  authUrl: {
    env: 'AUTH_URL',
    default: undefined,
    description: 'Public base URL of the authorization server; default http://localhost:<port>. Issuers are <AUTH_URL>/auth/realms/<realm>.',
  },
  appUrl: {
    env: 'APP_URL',
    default: undefined,
    description: "Base URL of the service's web application (hosts /authentication_code); default AUTH_URL.",
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    default: undefined,
    description: "sqlite:<path> for the embedded database, or a postgres:// URL for PostgreSQL. Default: sqlite:<install dir>/data/realmgate.db (the same file for the server and every CLI command, whatever the working directory; the CLI names the database it opened on stderr). A postgres:// URL may name a schema with ?schema=<name>. Only start, migrate, realm create, realm import and bootstrap-admin create a new database (an SQLite file, a PostgreSQL schema); every other command refuses a place where there is none.",
  },
  logLevel: { env: 'LOG_LEVEL', default: 'info', description: 'pino log level: fatal, error, warn, info, debug, trace or silent.' },
  cacheTtlMs: {
    env: 'REALMGATE_CACHE_TTL_MS',
    default: '2000',
    description: 'How long realm, client, scope and key lookups are cached in memory; changes made elsewhere show within this time.',
  },
  keySecret: {
    env: 'REALMGATE_KEY_SECRET',
    default: undefined,
    description: 'The key-encryption secret of the private signing keys (AES-256-GCM, key derived with scrypt); every process that signs or creates keys needs the same value. When unset, the key file (REALMGATE_KEY_FILE) holds it.',
  },
  keyFile: {
    env: 'REALMGATE_KEY_FILE',
    default: undefined,
    description: 'Used when REALMGATE_KEY_SECRET is unset: the file holding the key-encryption secret, created (mode 0600) on first start; default beside the SQLite file (realmgate.db -> realmgate.key), or data/realmgate.key in the installation directory with PostgreSQL. Never stored in the database.',
  },
  requestTimeoutMs: {
    env: 'REALMGATE_REQUEST_TIMEOUT_MS',
    default: '30000',
    description: 'A request whose headers and body have not all arrived this many milliseconds after it started is answered 408 and its connection closed.',
  },
  dbWaitTimeoutMs: {
    env: 'REALMGATE_DB_WAIT_TIMEOUT_MS',
    default: '5000',
    description:
      "How long a request (or a CLI command) waits for the database before it gives up as busy, answered 503 with Retry-After: SQLite's write lock held by another process (busy timeout); on PostgreSQL a pooled connection (all in use, or a new one slow to open) and each lock another transaction holds (lock_timeout). Migrations at start wait longer (see docs/operations.md). 100 to 600000.",
  },
  dbQueryTimeoutMs: {
    env: 'REALMGATE_DB_QUERY_TIMEOUT_MS',
    default: '30000',
    description:
      'PostgreSQL, the server only: a statement that has not answered after this many milliseconds is abandoned, answered 503, and its connection closed, so that a database host gone without a reset (powered off, a network partition, a failover to a new address) does not hold every pooled connection, and every request, for the ~15 minutes TCP takes to give up. More than REALMGATE_DB_WAIT_TIMEOUT_MS; 1000 to 3600000. Migrations and CLI commands are not bounded.',
  },
  dbPoolSize: {
    env: 'REALMGATE_DB_POOL_SIZE',
    default: '10',
    description:
      'PostgreSQL: connections each server process (each worker of --workers) opens at most. Keep nodes x workers x this under the server\'s max_connections, leaving room for operators and migrations (see docs/capacity.md, Connections). 1 to 1000; ignored with SQLite.',
  },
  bootstrapAdminUsername: {
    env: 'REALMGATE_BOOTSTRAP_ADMIN_USERNAME',
    default: undefined,
    description: 'With REALMGATE_BOOTSTRAP_ADMIN_PASSWORD, at start on a database without an administrator: creates realm master, its admin-cli client and this admin user (as Keycloak 26).',
  },
  bootstrapAdminPassword: {
    env: 'REALMGATE_BOOTSTRAP_ADMIN_PASSWORD',
    default: undefined,
    description: "The bootstrap admin's password (at least 8 characters); only used when the admin is created. Change it afterwards.",
  },
  sqliteSync: {
    env: 'REALMGATE_SQLITE_SYNCHRONOUS',
    default: 'FULL',
    description: 'SQLite synchronous pragma: FULL makes every committed token durable on disk before the response is sent.',
  },
  trustedProxies: {
    env: 'REALMGATE_TRUSTED_PROXIES',
    default: undefined,
    description: 'Comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For / Forwarded headers are believed (e.g. 127.0.0.1,10.0.0.0/8). Unset: the peer address is the client.',
  },
  metricsPort: {
    env: 'REALMGATE_METRICS_PORT',
    default: undefined,
    description: 'Management port serving /metrics (Prometheus) and /health/live, /health/ready on HOST; unset: no management port.',
  },
  collectorIntervalS: {
    env: 'REALMGATE_COLLECTOR_INTERVAL_S',
    default: '300',
    description: 'Seconds between runs of the collector of expired rows (one node at a time); 0 turns it off.',
  },
  eventsRetentionDays: {
    env: 'REALMGATE_EVENTS_RETENTION_DAYS',
    default: '90',
    description: 'Login and token events older than this many days are deleted by the collector (a realm may set its own: Keycloak\'s eventsExpiration).',
  },
  adminEventsRetentionDays: {
    env: 'REALMGATE_ADMIN_EVENTS_RETENTION_DAYS',
    default: '365',
    description: 'Admin events (every administrative change) older than this many days are deleted by the collector (a realm may set its own: Keycloak\'s realm attribute adminEventsExpiration).',
  },
  maxInteractionsPerAddress: {
    env: 'REALMGATE_MAX_INTERACTIONS_PER_ADDRESS',
    default: '100',
    description: 'Pending requests one client address may hold, each kind capped apart: unfinished authorization requests (sign-ins in progress; further ones get an error page), device codes of public clients not yet expired (device authorizations, RFC 8628), and pushed authorization requests of public clients not yet expired (RFC 9126); further device codes and pushed requests get 429 temporarily_unavailable.',
  },
  maxInteractions: {
    env: 'REALMGATE_MAX_INTERACTIONS',
    default: '100000',
    description: 'Pending requests the server holds in all, each kind capped apart: unfinished authorization requests, device codes not yet expired (of every client), and pushed authorization requests not yet expired (RFC 9126); further ones are refused until some finish or expire.',
  },
  maxPushedRequestsPerClient: {
    env: 'REALMGATE_MAX_PUSHED_REQUESTS_PER_CLIENT',
    default: '1000',
    description: 'Pushed authorization requests (RFC 9126) not yet expired that one confidential client may hold (those of a public client are capped per client address by REALMGATE_MAX_INTERACTIONS_PER_ADDRESS instead); further ones get 429 temporarily_unavailable until some expire (the realm\'s parRequestUriLifespan, 60 s by default).',
  },
} as const satisfies Record<string, SettingSpec>;

/** Realm defaults; each can be changed per realm with `realmgate realm update`. */
export const REALM_DEFAULTS = {
  /** Specification, Limits: an authorization code expires within 30 to 50 seconds. */
  codeLifetime: 45,
  /** Specification, token response example: 259200 s (3 days). */
  accessTokenLifetime: 259_200,
  /** Specification: a refresh token is valid for about 180 days; every refresh starts a fresh period. */
  refreshIdleLifetime: 15_552_000,
  /** Specification, Limits: a chain of refreshes lasts about 6 to 24 months; we end it at 730 days. */
  refreshMaxLifetime: 730 * 86_400,
  /** How long a browser stays logged in to a realm (single sign-on). */
  ssoSessionLifetime: 10 * 3_600,
  /** How long a user has to finish login, consent and organization selection. */
  interactionLifetime: 30 * 60,
  accessTokenAudience: 'account',
  signingAlg: 'RS256',
  /** Access token format: `jwt` (Keycloak's, typ Bearer) or `rfc9068` (RFC 9068: header typ at+jwt, claim client_id). */
  accessTokenFormat: 'jwt' as 'jwt' | 'rfc9068',
  /** A user must belong to an organization to sign in to a client (the seed's service); imports may turn it off. */
  organizationRequired: true as boolean,
  /** Brute-force protection: consecutive failed logins of one username before it is locked. */
  maxLoginFailures: 5,
  /** The first lockout; each further one doubles, up to maxLockoutSeconds. */
  lockoutSeconds: 60,
  maxLockoutSeconds: 900,
  /** Refresh concurrency grace window in seconds; 0 (off): a rotated token presented again revokes its chain. */
  refreshGraceSeconds: 0,
  /** The most successors the grace window gives after one rotation. */
  refreshGraceMax: 1,
  /** Retention of the realm's events and admin events in seconds; null: the server's settings. */
  eventsRetention: null as number | null,
  adminEventsRetention: null as number | null,
  /** "Forgot password?" on the login page (Keycloak's resetPasswordAllowed, off by default). */
  resetPasswordAllowed: false as boolean,
  /** A reset link lives 5 minutes, a link an administrator sends 12 hours (Keycloak's defaults). */
  actionTokenUserLifespan: 300,
  actionTokenAdminLifespan: 43_200,
  /** Keycloak's password policy; '' (none): Realmgate's own rule only (8 to 1024 characters). */
  passwordPolicy: '',
  /** Keycloak's login options and their defaults: email accepted at sign-in, no two users with one email, no "Remember me". */
  loginWithEmailAllowed: true as boolean,
  duplicateEmailsAllowed: false as boolean,
  rememberMe: false as boolean,
  /** A remembered session's idle timeout and lifetime, seconds; 0: the realm's usual ones (Keycloak's *RememberMe). */
  ssoIdleRememberMe: 0,
  ssoMaxRememberMe: 0,
  /** Self-registration ("Register" on the login page), the email as username there, and email verification (Keycloak's names; all off). */
  registrationAllowed: false as boolean,
  registrationEmailAsUsername: false as boolean,
  /** Keycloak's editUsernameAllowed: users and administrators may change usernames (off). */
  editUsernameAllowed: false as boolean,
  /**
   * Keycloak's first broker login "Review Profile" (idp-review-profile's update.profile.on.first.login):
   * at a first sign-in through an identity provider, the user reviews the account it gives only when it
   * lacks something (missing), always (on), or never (off).
   */
  brokerReviewProfile: 'missing' as BrokerReviewProfile,
  verifyEmail: false as boolean,
  /** Seconds a pushed authorization request's request_uri is valid (RFC 9126 2.2; Keycloak's parRequestUriLifespan). */
  parRequestUriLifespan: 60,
  /** Keycloak's webAuthnPolicy* (security keys as a second factor), its defaults (src/admin/webauthn-policy.ts). */
  webAuthnPolicy: WEBAUTHN_POLICY_DEFAULTS,
  webAuthnPasswordlessPolicy: WEBAUTHN_POLICY_DEFAULTS,
  /** Keycloak's requiredActions settings: none configured (all enabled, none a default action; src/admin/required-actions.ts). */
  requiredActionSettings: {},
  /** Keycloak's defaultDefaultClientScopes / defaultOptionalClientScopes: null, the built-in scopes (all default) for new clients. */
  clientScopeDefaults: null,
  /** Keycloak's internationalization settings and their defaults: off, no supported locales, no default locale (English). */
  internationalizationEnabled: false as boolean,
  supportedLocales: [] as string[],
  defaultLocale: null as string | null,
} as const;

export const CODE_LIFETIME_RANGE = { min: 30, max: 50 } as const;
