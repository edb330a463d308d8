import type { WebAuthnPolicy } from '../../storage/types.js';
import type { RealmReportBuilder } from './import-report.js';
import { PASSWORDLESS_PREFIX, readWebAuthnPolicy, WEBAUTHN_ALGORITHMS, WEBAUTHN_POLICY_DEFAULTS } from '../webauthn-policy.js';
import { ValidationError } from '../validation.js';

type Json = Record<string, unknown>;

/** The file's realm without its webAuthnPolicy* fields (read apart, leniently, by importWebAuthnPolicy). */
export function withoutWebAuthnPolicy(rep: Json): Json {
  return Object.fromEntries(Object.entries(rep).filter(([k]) => !k.startsWith('webAuthnPolicy')));
}

/**
 * Keycloak's webAuthnPolicy* settings of a file (`prefix` webAuthnPolicyPasswordless: the passwordless
 * policy's): each field read on its own, so that one Realmgate refuses (an algorithm it does not verify,
 * such as ES384 or RS1) is left out, reported, and the others kept.
 */
export function importWebAuthnPolicy(rep: Json, report: RealmReportBuilder, prefix = 'webAuthnPolicy'): WebAuthnPolicy {
  const policy: WebAuthnPolicy = { ...WEBAUTHN_POLICY_DEFAULTS };
  const algsField = `${prefix}SignatureAlgorithms`;
  const algs = rep[algsField];
  const fields = Object.keys(rep).filter((k) => k.startsWith(prefix) && (prefix === PASSWORDLESS_PREFIX || !k.startsWith(PASSWORDLESS_PREFIX)));
  for (const k of fields) {
    let value = rep[k];
    if (k === algsField && Array.isArray(algs)) {
      const known = algs.filter((a): a is string => typeof a === 'string' && (WEBAUTHN_ALGORITHMS as string[]).includes(a));
      const left = algs.filter((a) => !known.includes(a as string));
      if (left.length > 0) report.mapped(`realm setting ${algsField}`, `${left.map(String).join(', ')} not verified by Realmgate (it verifies ${WEBAUTHN_ALGORITHMS.join(', ')}): left out${known.length === 0 ? '; ES256 instead' : ''}`);
      value = known.length > 0 ? known : ['ES256'];
    }
    try {
      Object.assign(policy, readWebAuthnPolicy({ [k]: value }, prefix));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      report.mapped(`realm setting ${k}`, `${err.message}: Keycloak's default kept`);
    }
  }
  const changed = (Object.keys(policy) as (keyof WebAuthnPolicy)[]).filter((k) => JSON.stringify(policy[k]) !== JSON.stringify(WEBAUTHN_POLICY_DEFAULTS[k]));
  if (changed.length > 0) report.imported(`realm setting ${prefix}`, `${prefix === PASSWORDLESS_PREFIX ? 'passkeys (passwordless)' : 'security keys as a second factor'}: ${changed.join(', ')} kept`);
  return policy;
}
