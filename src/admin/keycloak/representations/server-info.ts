import { SUPPORTED_POLICIES } from '../../password-policy.js';
import os from 'node:os';
import v8 from 'node:v8';
import { SIGNING_ALGS } from '../../../crypto/keystore.js';
import type { IdentityProviderType } from '../../../storage/types.js';
import { SOCIAL_PROVIDER_FACTORIES } from '../../../oauth/social-providers.js';
import { ATTRIBUTE_MAPPER, AUDIENCE_MAPPER, CLIENT_ROLE_MAPPER, GROUP_MAPPER, HARDCODED_MAPPER, PROPERTY_MAPPER, REALM_ROLE_MAPPER, SESSION_NOTE_MAPPER } from '../../../oauth/protocol-mappers.js';

/**
 * The Keycloak version whose admin REST API Realmgate answers (its representations and routes are
 * Keycloak 26's). Tools read it from serverinfo to choose what they send: the Terraform provider parses
 * it with hashicorp/go-version at its first login and fails without it; keycloak-config-cli compares it
 * with the version it was built for. Realmgate's own version is beside it, as `realmgateVersion`.
 */
export const KEYCLOAK_API_VERSION = '26.0.0';

/**
 * Keycloak's feature flags that tools check, with whether Realmgate has the feature (Keycloak's names,
 * org.keycloak.common.Profile.Feature). A flag not listed is a feature Realmgate does not have.
 */
const FEATURES: ReadonlyArray<{ name: string; label: string; enabled: boolean }> = [
  { name: 'ORGANIZATION', label: 'Organization support within realms', enabled: true },
  { name: 'DEVICE_FLOW', label: 'OAuth 2.0 Device Authorization Grant', enabled: true },
  { name: 'PAR', label: 'OAuth 2.0 Pushed Authorization Requests (PAR)', enabled: true },
  { name: 'DPOP', label: 'OAuth 2.0 Demonstrating Proof-of-Possession at the Application Layer', enabled: true },
  { name: 'TOKEN_EXCHANGE', label: 'Token Exchange Service', enabled: false },
  { name: 'TOKEN_EXCHANGE_STANDARD_V2', label: 'Standard Token Exchange version 2', enabled: true },
  { name: 'ADMIN_FINE_GRAINED_AUTHZ', label: 'Fine-Grained Admin Permissions', enabled: false },
  { name: 'ADMIN_FINE_GRAINED_AUTHZ_V2', label: 'Fine-Grained Admin Permissions version 2', enabled: false },
  { name: 'AUTHORIZATION', label: 'Authorization Service', enabled: false },
  { name: 'IMPERSONATION', label: 'Ability for admins to impersonate users', enabled: true },
  { name: 'CLIENT_POLICIES', label: 'Client configuration policies', enabled: false },
  { name: 'DYNAMIC_SCOPES', label: 'Dynamic OAuth 2.0 scopes', enabled: false },
];

const FLAGS = ['id.token.claim', 'access.token.claim', 'userinfo.token.claim', 'introspection.token.claim'];
const prop = (name: string, type = 'String'): Record<string, unknown> => ({ name, label: name, type, defaultValue: FLAGS.includes(name) ? 'true' : undefined });
const CLAIM = ['claim.name', 'jsonType.label'];

/** The protocol mapper types Realmgate runs (src/oauth/protocol-mappers.ts), as Keycloak describes its own, with the config they read. */
const MAPPER_TYPES: ReadonlyArray<Record<string, unknown>> = [
  { id: ATTRIBUTE_MAPPER, name: 'User Attribute', helpText: "Map a user attribute (or one of the user's groups') to a token claim.", props: ['user.attribute', ...CLAIM, 'multivalued', 'aggregate.attrs', ...FLAGS] },
  { id: HARDCODED_MAPPER, name: 'Hardcoded claim', helpText: 'Hardcode a claim into the token.', props: [...CLAIM, 'claim.value', ...FLAGS] },
  { id: AUDIENCE_MAPPER, name: 'Audience', helpText: 'Add a client, or a custom audience, to the audience (aud) of the access token.', props: ['included.client.audience', 'included.custom.audience', 'access.token.claim', 'introspection.token.claim'] },
  { id: GROUP_MAPPER, name: 'Group Membership', helpText: "Map the user's group membership to a token claim.", props: ['claim.name', 'full.path', ...FLAGS] },
  { id: PROPERTY_MAPPER, name: 'User Property', helpText: 'Map a built in user property (username, email, firstName, lastName, emailVerified, id, enabled) to a token claim.', props: ['user.attribute', ...CLAIM, ...FLAGS] },
  { id: SESSION_NOTE_MAPPER, name: 'User Session Note', helpText: 'Map a note of the user session (IMPERSONATOR_ID, IMPERSONATOR_USERNAME, AUTH_TIME) to a token claim.', props: ['user.session.note', ...CLAIM, ...FLAGS] },
  { id: REALM_ROLE_MAPPER, name: 'User Realm Role', helpText: 'Map a user realm role to a token claim.', props: ['usermodel.realmRoleMapping.rolePrefix', 'multivalued', ...CLAIM, ...FLAGS] },
  {
    id: CLIENT_ROLE_MAPPER,
    name: 'User Client Role',
    helpText: 'Map a user client role to a token claim.',
    props: ['usermodel.clientRoleMapping.clientId', 'usermodel.clientRoleMapping.rolePrefix', 'multivalued', ...CLAIM, ...FLAGS],
  },
].map(({ props, ...t }) => ({ ...t, category: 'Token mapper', priority: 0, properties: (props as string[]).map((n) => prop(n, FLAGS.includes(n) || n === 'multivalued' || n === 'aggregate.attrs' || n === 'full.path' ? 'boolean' : 'String')) }));

/**
 * The OpenID Connect identity provider types Realmgate brokers to (storage's IDENTITY_PROVIDER_TYPES, but
 * for the social ones: src/oauth/social-providers.ts), as Keycloak's serverinfo and GET
 * identity-provider/providers/{id} name its factories.
 */
export const IDENTITY_PROVIDER_FACTORIES: ReadonlyArray<{ id: IdentityProviderType; name: string }> = [
  { id: 'oidc', name: 'OpenID Connect v1.0' },
  { id: 'keycloak-oidc', name: 'Keycloak OpenID Connect' },
];

const MB = 1024 * 1024;
const formatted = (bytes: number): string => `${Math.round(bytes / MB)} MB`;

/** Keycloak's uptime text: "0 days, 2 hours, 5 minutes, 3 seconds". */
function uptimeText(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 86_400)} days, ${Math.floor((s % 86_400) / 3600)} hours, ${Math.floor((s % 3600) / 60)} minutes, ${s % 60} seconds`;
}

/**
 * Keycloak's ServerInfoRepresentation (GET /admin/serverinfo), with what Realmgate is: the version of the
 * API it answers, the process's memory and uptime (a Node.js process: the java* fields are absent), the
 * features above, the signature algorithms clients may choose, the themes (one login theme, English),
 * the protocol mapper types it runs, the identity provider types it brokers to. Providers, component types and password policies: none a tool could configure.
 */
export function serverInfoRepresentation(input: { realmgateVersion: string; nowMs: number }): Record<string, unknown> {
  const heap = v8.getHeapStatistics();
  const uptimeMillis = Math.round(process.uptime() * 1000);
  return {
    systemInfo: {
      version: KEYCLOAK_API_VERSION,
      realmgateVersion: input.realmgateVersion,
      serverTime: new Date(input.nowMs).toUTCString(),
      uptime: uptimeText(uptimeMillis),
      uptimeMillis,
      osName: os.type(),
      osArchitecture: os.arch(),
      osVersion: os.release(),
      fileEncoding: 'UTF-8',
      userTimezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userLocale: 'en',
      nodeVersion: process.version,
    },
    cpuInfo: { processorCount: os.availableParallelism() },
    memoryInfo: {
      total: heap.heap_size_limit,
      totalFormated: formatted(heap.heap_size_limit),
      used: heap.used_heap_size,
      usedFormated: formatted(heap.used_heap_size),
      free: heap.heap_size_limit - heap.used_heap_size,
      freePercentage: Math.round((100 * (heap.heap_size_limit - heap.used_heap_size)) / heap.heap_size_limit),
      freeFormated: formatted(heap.heap_size_limit - heap.used_heap_size),
    },
    profileInfo: {
      name: 'community',
      disabledFeatures: FEATURES.filter((f) => !f.enabled).map((f) => f.name),
      previewFeatures: [],
      experimentalFeatures: [],
    },
    features: FEATURES.map((f) => ({ name: f.name, label: f.label, type: 'DEFAULT', enabled: f.enabled, isEnabled: f.enabled, dependencies: [] })),
    cryptoInfo: {
      cryptoProvider: 'node:crypto (OpenSSL)',
      supportedKeystoreTypes: [],
      clientSignatureSymmetricAlgorithms: [],
      clientSignatureAsymmetricAlgorithms: Object.keys(SIGNING_ALGS),
    },
    themes: { login: [{ name: 'realmgate', locales: ['en'] }], account: [{ name: 'realmgate', locales: ['en'] }], admin: [{ name: 'realmgate', locales: ['en'] }], email: [] },
    socialProviders: SOCIAL_PROVIDER_FACTORIES.map((f) => ({ ...f })),
    identityProviders: IDENTITY_PROVIDER_FACTORIES.map((f) => ({ ...f })),
    clientImporters: [],
    providers: {},
    protocolMapperTypes: { 'openid-connect': MAPPER_TYPES },
    builtinProtocolMappers: { 'openid-connect': [] },
    clientInstallations: {},
    componentTypes: {},
    // Keycloak's PasswordPolicyTypeRepresentation of each policy Realmgate enforces (src/admin/password-policy.ts).
    passwordPolicies: SUPPORTED_POLICIES.map((p) => ({ ...p })),
    enums: { sslRequired: ['all', 'external', 'none'], unmanagedAttributePolicy: ['ADMIN_EDIT'] },
  };
}
