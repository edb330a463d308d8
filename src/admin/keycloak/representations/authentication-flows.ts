import { createHash } from 'node:crypto';

/**
 * Realmgate's sign-in steps as Keycloak's authentication flows, for the admin API to read
 * (GET authentication/flows, .../executions). Realmgate has no flow engine: the steps are fixed in the
 * code (src/oauth/authorize/interaction.ts nextStep, the password grant, client authentication, the
 * registration, reset and broker routes), and these flows describe them with Keycloak's built-in aliases
 * and the authenticator ids that match each step. A step Realmgate does not take is not listed (Kerberos,
 * reCAPTCHA and terms on the registration form, reset-otp, client-secret-jwt, X.509); what it does that Keycloak's flows have no place for (consent, the choice of an
 * organization, passkeys on the password page) is said in the flow's description. A realm imported from
 * Keycloak keeps these flows whatever its file had (docs/migrating-from-keycloak.md).
 */

type Requirement = 'REQUIRED' | 'ALTERNATIVE' | 'CONDITIONAL' | 'DISABLED';
type Step = { authenticator: string; requirement: Requirement } | { flow: FlowSpec; requirement: Requirement };
interface FlowSpec {
  alias: string;
  description: string;
  providerId: 'basic-flow' | 'client-flow' | 'form-flow';
  /** form-flow: the form's own authenticator (Keycloak's registration-page-form). */
  form?: string;
  steps: Step[];
}

/** Keycloak's display names (and a line on what Realmgate does) of the authenticators the flows use. */
export const AUTHENTICATORS: Record<string, { displayName: string; description: string; kind: 'authenticator' | 'client' | 'form' | 'form-action' }> = {
  'auth-cookie': { displayName: 'Cookie', description: 'Signs in with the browser session when it is still valid (and prompt, max_age allow it).', kind: 'authenticator' },
  'identity-provider-redirector': { displayName: 'Identity Provider Redirector', description: 'Goes to the identity provider kc_idp_hint names, when it is enabled and not link-only.', kind: 'authenticator' },
  'auth-username-password-form': {
    displayName: 'Username Password Form',
    description: 'The username (or email) and password; a passkey instead when a user of the realm has one; an email whose domain an organization routes goes to its identity provider.',
    kind: 'authenticator',
  },
  'conditional-user-configured': { displayName: 'Condition - user configured', description: 'The user has a second factor: an authenticator app or a two-factor security key.', kind: 'authenticator' },
  'webauthn-authenticator': { displayName: 'WebAuthn Authenticator', description: "The user's security key, asked first when the user has one.", kind: 'authenticator' },
  'auth-otp-form': { displayName: 'OTP Form', description: 'The code of an authenticator app, or a recovery code.', kind: 'authenticator' },
  'direct-grant-validate-username': { displayName: 'Username Validation', description: 'The username of the password grant (the client needs directAccessGrantsEnabled).', kind: 'authenticator' },
  'direct-grant-validate-password': { displayName: 'Password', description: 'The password of the password grant.', kind: 'authenticator' },
  'direct-grant-validate-otp': { displayName: 'OTP', description: 'The otp (or totp) parameter, for a user with an authenticator app; a user with a security key is refused.', kind: 'authenticator' },
  'registration-page-form': { displayName: 'Registration Page', description: 'The registration form (registrationAllowed).', kind: 'form' },
  'registration-user-creation': { displayName: 'Registration User Profile Creation', description: 'The new user, under the user profile and the realm settings.', kind: 'form-action' },
  'registration-password-action': { displayName: 'Password Validation', description: "The new password, under the realm's password policy.", kind: 'form-action' },
  'reset-credentials-choose-user': { displayName: 'Choose User', description: 'The username, or an email only one user has (resetPasswordAllowed and SMTP settings).', kind: 'authenticator' },
  'reset-credential-email': { displayName: 'Send Reset Email', description: 'A single-use link by email, valid for the action token lifespan.', kind: 'authenticator' },
  'reset-password': { displayName: 'Reset Password', description: 'The new password; in the same browser the sign-in then goes on, second factor included.', kind: 'authenticator' },
  'client-secret': { displayName: 'Client Id and Secret', description: 'HTTP Basic or client_secret_post.', kind: 'client' },
  'client-jwt': { displayName: 'Signed Jwt', description: 'private_key_jwt (RFC 7523), asymmetric algorithms, each assertion once.', kind: 'client' },
  'idp-review-profile': {
    displayName: 'Review Profile',
    description: "The account a provider gives at a first sign-in, reviewed by the user before it makes a user: when it lacks an email, a first or a last name (Keycloak's default mode, missing), always (on) or never (off), as the realm's review profile config says.",
    kind: 'authenticator',
  },
  'idp-create-user-if-unique': { displayName: 'Create User If Unique', description: 'A new user when no user has the same username or email (not for a link-only provider).', kind: 'authenticator' },
  'idp-confirm-link': { displayName: 'Confirm link existing account', description: 'The page that offers to link the existing account (or cancel).', kind: 'authenticator' },
  'idp-username-password-form': { displayName: 'Username Password Form for identity provider reauthentication', description: "The existing account's password, to link it.", kind: 'authenticator' },
};

const secondFactor = (alias: string): FlowSpec => ({
  alias,
  description: 'Flow to determine if any 2FA is required for the authentication',
  providerId: 'basic-flow',
  steps: [
    { authenticator: 'conditional-user-configured', requirement: 'REQUIRED' },
    { authenticator: 'webauthn-authenticator', requirement: 'ALTERNATIVE' },
    { authenticator: 'auth-otp-form', requirement: 'ALTERNATIVE' },
  ],
});

const FLOWS: FlowSpec[] = [
  {
    alias: 'browser',
    description:
      'Browser based authentication. Realmgate then asks for consent (unless an earlier one covers the scopes) and, in realms with organizations, for the organization.',
    providerId: 'basic-flow',
    steps: [
      { authenticator: 'auth-cookie', requirement: 'ALTERNATIVE' },
      { authenticator: 'identity-provider-redirector', requirement: 'ALTERNATIVE' },
      {
        flow: {
          alias: 'forms',
          description: 'Username, password, otp and other auth forms.',
          providerId: 'basic-flow',
          steps: [
            { authenticator: 'auth-username-password-form', requirement: 'REQUIRED' },
            { flow: secondFactor('Browser - Conditional 2FA'), requirement: 'CONDITIONAL' },
          ],
        },
        requirement: 'ALTERNATIVE',
      },
    ],
  },
  {
    alias: 'direct grant',
    description: 'OpenID Connect Resource Owner Grant',
    providerId: 'basic-flow',
    steps: [
      { authenticator: 'direct-grant-validate-username', requirement: 'REQUIRED' },
      { authenticator: 'direct-grant-validate-password', requirement: 'REQUIRED' },
      {
        flow: {
          alias: 'Direct Grant - Conditional OTP',
          description: 'Flow to determine if the OTP is required for the authentication',
          providerId: 'basic-flow',
          steps: [
            { authenticator: 'conditional-user-configured', requirement: 'REQUIRED' },
            { authenticator: 'direct-grant-validate-otp', requirement: 'REQUIRED' },
          ],
        },
        requirement: 'CONDITIONAL',
      },
    ],
  },
  {
    alias: 'registration',
    description: 'Registration flow. No reCAPTCHA (a limit of registrations per address instead); terms are the TERMS_AND_CONDITIONS required action.',
    providerId: 'basic-flow',
    steps: [
      {
        flow: {
          alias: 'registration form',
          description: 'Registration form',
          providerId: 'form-flow',
          form: 'registration-page-form',
          steps: [
            { authenticator: 'registration-user-creation', requirement: 'REQUIRED' },
            { authenticator: 'registration-password-action', requirement: 'REQUIRED' },
          ],
        },
        requirement: 'REQUIRED',
      },
    ],
  },
  {
    alias: 'reset credentials',
    description: 'Reset credentials for a user if they forgot their password or something. No second factor here: the sign-in after the reset asks for it.',
    providerId: 'basic-flow',
    steps: [
      { authenticator: 'reset-credentials-choose-user', requirement: 'REQUIRED' },
      { authenticator: 'reset-credential-email', requirement: 'REQUIRED' },
      { authenticator: 'reset-password', requirement: 'REQUIRED' },
    ],
  },
  {
    alias: 'clients',
    description: 'Base authentication for clients. No client-secret-jwt (it needs the secret in clear) and no X.509.',
    providerId: 'client-flow',
    steps: [
      { authenticator: 'client-secret', requirement: 'ALTERNATIVE' },
      { authenticator: 'client-jwt', requirement: 'ALTERNATIVE' },
    ],
  },
  {
    alias: 'first broker login',
    description:
      'Actions taken after first broker login with identity provider account, which is not yet linked to any account. A provider of an organization adds its users to it.',
    providerId: 'basic-flow',
    steps: [
      { authenticator: 'idp-review-profile', requirement: 'REQUIRED' },
      {
        flow: {
          alias: 'User creation or linking',
          description: 'Flow for the existing/non-existing user alternatives',
          providerId: 'basic-flow',
          steps: [
            { authenticator: 'idp-create-user-if-unique', requirement: 'ALTERNATIVE' },
            {
              flow: {
                alias: 'Handle Existing Account',
                description: 'Handle what to do if there is existing account with same email/username like authenticated identity provider',
                providerId: 'basic-flow',
                steps: [
                  { authenticator: 'idp-confirm-link', requirement: 'REQUIRED' },
                  {
                    flow: {
                      alias: 'Verify Existing Account by Re-authentication',
                      description: 'Reauthentication of existing account',
                      providerId: 'basic-flow',
                      steps: [
                        { authenticator: 'idp-username-password-form', requirement: 'REQUIRED' },
                        { flow: secondFactor('First broker login - Conditional 2FA'), requirement: 'CONDITIONAL' },
                      ],
                    },
                    requirement: 'REQUIRED',
                  },
                ],
              },
              requirement: 'ALTERNATIVE',
            },
          ],
        },
        requirement: 'REQUIRED',
      },
    ],
  },
];

/** Keycloak's realm flow bindings and the built-in flow each names (the realm representation's values). */
export const FLOW_BINDINGS = {
  browserFlow: 'browser',
  directGrantFlow: 'direct grant',
  registrationFlow: 'registration',
  resetCredentialsFlow: 'reset credentials',
  clientAuthenticationFlow: 'clients',
  firstBrokerLoginFlow: 'first broker login',
} as const;

/** A stable id per realm and place (the flows are not stored): a UUID made of SHA-256(realm, path). */
function stableId(realmId: string, path: string): string {
  const h = createHash('sha256').update(`realmgate-flow\u0000${realmId}\u0000${path}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The one authenticator config Realmgate has: the first broker login's Review Profile mode (Keycloak's
 * "review profile config" of idp-review-profile, key update.profile.on.first.login), a realm setting.
 */
export const REVIEW_PROFILE = 'idp-review-profile';
export const REVIEW_CONFIG_ALIAS = 'review profile config';
export const REVIEW_CONFIG_KEY = 'update.profile.on.first.login';
export const reviewConfigId = (realmId: string): string => stableId(realmId, `config/${REVIEW_CONFIG_ALIAS}`);

/** Keycloak's AuthenticatorConfigRepresentation of the realm's Review Profile mode. */
export function reviewConfig(realm: { id: string; brokerReviewProfile: string }): { id: string; alias: string; config: Record<string, string> } {
  return { id: reviewConfigId(realm.id), alias: REVIEW_CONFIG_ALIAS, config: { [REVIEW_CONFIG_KEY]: realm.brokerReviewProfile } };
}

export interface FlowRepresentation {
  id: string;
  alias: string;
  description: string;
  providerId: string;
  topLevel: boolean;
  builtIn: true;
  authenticationExecutions: Array<Record<string, unknown>>;
}

export interface ExecutionInfo {
  id: string;
  requirement: Requirement;
  displayName: string;
  description: string;
  requirementChoices: Requirement[];
  configurable: boolean;
  /** The id of the execution's authenticator config (the review profile config only). */
  authenticationConfig?: string;
  authenticationFlow?: true;
  providerId: string;
  flowId?: string;
  level: number;
  index: number;
  priority: number;
}

const priority = (i: number): number => (i + 1) * 10;
const choices = (step: Step): Requirement[] =>
  'flow' in step ? ['REQUIRED', 'ALTERNATIVE', 'DISABLED', 'CONDITIONAL'] : step.authenticator.startsWith('conditional-') ? ['REQUIRED', 'DISABLED'] : ['REQUIRED', 'ALTERNATIVE', 'DISABLED'];

/** Every flow of the realm, top-level and nested, as Keycloak's AuthenticationFlowRepresentation. */
export function realmFlows(realmId: string): FlowRepresentation[] {
  const out: FlowRepresentation[] = [];
  const walk = (spec: FlowSpec, topLevel: boolean): void => {
    out.push({
      id: stableId(realmId, `flow/${spec.alias}`),
      alias: spec.alias,
      description: spec.description,
      providerId: spec.providerId,
      topLevel,
      builtIn: true,
      authenticationExecutions: spec.steps.map((step, i) =>
        'flow' in step
          ? { authenticatorFlow: true, autheticatorFlow: true, requirement: step.requirement, priority: priority(i), flowAlias: step.flow.alias, userSetupAllowed: false, ...(step.flow.form ? { authenticator: step.flow.form } : {}) }
          : { authenticator: step.authenticator, authenticatorFlow: false, autheticatorFlow: false, requirement: step.requirement, priority: priority(i), userSetupAllowed: false, ...(step.authenticator === REVIEW_PROFILE ? { authenticatorConfig: REVIEW_CONFIG_ALIAS } : {}) },
      ),
    });
    for (const step of spec.steps) if ('flow' in step) walk(step.flow, false);
  };
  for (const f of FLOWS) walk(f, true);
  return out;
}

/**
 * Keycloak's GET flows/{alias}/executions: the steps of the flow and of the flows in it, depth first, each
 * with its level (0 for the flow's own steps) and its index among its siblings. undefined: no such flow.
 */
export function flowExecutions(realmId: string, alias: string): ExecutionInfo[] | undefined {
  const find = (specs: FlowSpec[]): FlowSpec | undefined => {
    for (const s of specs) {
      if (s.alias === alias) return s;
      const inner = find(s.steps.flatMap((st) => ('flow' in st ? [st.flow] : [])));
      if (inner) return inner;
    }
    return undefined;
  };
  const root = find(FLOWS);
  if (!root) return undefined;
  const out: ExecutionInfo[] = [];
  const walk = (spec: FlowSpec, level: number): void => {
    spec.steps.forEach((step, index) => {
      const id = stableId(realmId, `execution/${spec.alias}/${index}`);
      if ('flow' in step) {
        out.push({
          id,
          requirement: step.requirement,
          displayName: step.flow.alias,
          description: step.flow.description,
          requirementChoices: choices(step),
          configurable: false,
          authenticationFlow: true,
          providerId: step.flow.form ?? step.flow.providerId,
          flowId: stableId(realmId, `flow/${step.flow.alias}`),
          level,
          index,
          priority: priority(index),
        });
        walk(step.flow, level + 1);
      } else {
        const a = AUTHENTICATORS[step.authenticator]!;
        const config = step.authenticator === REVIEW_PROFILE ? { configurable: true, authenticationConfig: reviewConfigId(realmId) } : { configurable: false };
        out.push({ id, requirement: step.requirement, displayName: a.displayName, description: a.description, requirementChoices: choices(step), ...config, providerId: step.authenticator, level, index, priority: priority(index) });
      }
    });
  };
  walk(root, 0);
  return out;
}

/** Keycloak's authenticator-providers, client-authenticator-providers, form-providers, form-action-providers. */
export function authenticatorProviders(kind: 'authenticator' | 'client' | 'form' | 'form-action'): Array<{ id: string; displayName: string; description: string }> {
  return Object.entries(AUTHENTICATORS)
    .filter(([, a]) => a.kind === kind)
    .map(([id, a]) => ({ id, displayName: a.displayName, description: a.description }));
}
