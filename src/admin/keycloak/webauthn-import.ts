import type { WebAuthnPolicy } from '../../storage/types.js';
import type { RealmReportBuilder } from './import-report.js';
import { readWebAuthnPolicy, WEBAUTHN_ALGORITHMS, WEBAUTHN_POLICY_DEFAULTS } from '../webauthn-policy.js';
import { ValidationError } from '../validation.js';

type Json = Record<string, unknown>;

/** The file's realm without its webAuthnPolicy* fields (read apart, leniently, by importWebAuthnPolicy). */
export function withoutWebAuthnPolicy(rep: Json): Json {
  return Object.fromEntries(Object.entries(rep).filter(([k]) => !k.startsWith('webAuthnPolicy')));
}

/**
 * Keycloak's webAuthnPolicy* settings of a file: each field read on its own, so that one Realmgate
 * refuses (an algorithm it does not verify, such as ES384 or RS1) is left out, reported, and the others
 * kept. The Passwordless policy is reported as not offered when it differs from Keycloak's defaults.
 */
export function importWebAuthnPolicy(rep: Json, report: RealmReportBuilder): WebAuthnPolicy {
  const policy: WebAuthnPolicy = { ...WEBAUTHN_POLICY_DEFAULTS };
  const algs = rep.webAuthnPolicySignatureAlgorithms;
  const fields = Object.keys(rep).filter((k) => k.startsWith('webAuthnPolicy') && !k.startsWith('webAuthnPolicyPasswordless'));
  for (const k of fields) {
    let value = rep[k];
    if (k === 'webAuthnPolicySignatureAlgorithms' && Array.isArray(algs)) {
      const known = algs.filter((a): a is string => typeof a === 'string' && (WEBAUTHN_ALGORITHMS as string[]).includes(a));
      const left = algs.filter((a) => !known.includes(a as string));
      if (left.length > 0) report.mapped('realm setting webAuthnPolicySignatureAlgorithms', `${left.map(String).join(', ')} not verified by Realmgate (it verifies ${WEBAUTHN_ALGORITHMS.join(', ')}): left out${known.length === 0 ? '; ES256 instead' : ''}`);
      value = known.length > 0 ? known : ['ES256'];
    }
    try {
      Object.assign(policy, readWebAuthnPolicy({ [k]: value }));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      report.mapped(`realm setting ${k}`, `${err.message}: Keycloak's default kept`);
    }
  }
  const changed = (Object.keys(policy) as (keyof WebAuthnPolicy)[]).filter((k) => JSON.stringify(policy[k]) !== JSON.stringify(WEBAUTHN_POLICY_DEFAULTS[k]));
  if (changed.length > 0) report.imported('realm setting webAuthnPolicy', `security keys as a second factor: ${changed.join(', ')} kept`);
  const passwordless = Object.keys(rep).filter((k) => k.startsWith('webAuthnPolicyPasswordless'));
  const ppDefaults: Json = { webAuthnPolicyPasswordlessRpEntityName: 'keycloak', webAuthnPolicyPasswordlessRpId: '', webAuthnPolicyPasswordlessCreateTimeout: 0, webAuthnPolicyPasswordlessAvoidSameAuthenticatorRegister: false };
  const ppChanged = passwordless.filter((k) => {
    const v = rep[k];
    if (k in ppDefaults) return JSON.stringify(v) !== JSON.stringify(ppDefaults[k]);
    if (Array.isArray(v)) return k.endsWith('SignatureAlgorithms') ? JSON.stringify(v) !== JSON.stringify(['ES256']) && JSON.stringify(v) !== JSON.stringify(['ES256', 'RS256']) : v.length > 0;
    return v !== 'not specified' && v !== '' && v !== null && v !== undefined && !(k.endsWith('RequireResidentKey') && v === 'Yes') && !(k.endsWith('UserVerificationRequirement') && v === 'required');
  });
  if (ppChanged.length > 0) report.skipped('realm setting webAuthnPolicyPasswordless', `passwordless sign-in with a security key (webauthn-passwordless) is not offered yet: ${ppChanged.slice(0, 5).join(', ')} left out`);
  return policy;
}
