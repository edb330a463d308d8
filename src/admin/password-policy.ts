import vm from 'node:vm';
import { ValidationError } from './validation.js';

/**
 * Keycloak's password policies (a realm's `passwordPolicy`, e.g. `length(12) and digits(1) and
 * notUsername(undefined) and passwordHistory(3)`), the ones Realmgate enforces. Pure: no storage; the
 * history and the password's age are read by src/admin/operations/users.ts and the sign-in.
 *
 * Realmgate's own rule stays underneath whatever a realm asks: 8 to 1024 characters, hashed with
 * argon2id. A realm asking length(6) still gets 8; maxLength(2000) still 1024.
 */
export const PASSWORD_FLOOR = { min: 8, max: 1024 } as const;

/** The most earlier passwords passwordHistory(N) may keep (each one verified at every change: argon2id costs). */
export const MAX_PASSWORD_HISTORY = 24;
/** regexPattern: the longest pattern, and how long one test of it may run before the password is refused. */
export const MAX_REGEX_LENGTH = 256;
export const REGEX_TIMEOUT_MS = 50;
/** At most this many regexPattern rules: each test may take REGEX_TIMEOUT_MS of the event loop. */
export const MAX_REGEX_RULES = 5;

type ConfigType = 'int' | 'String' | null;

/** What Keycloak's /admin/serverinfo lists of a policy (PasswordPolicyProviderFactory). */
export interface PolicyType {
  id: string;
  displayName: string;
  configType: ConfigType;
  defaultValue: string | null;
  multipleSupported: boolean;
}

/** The policies Realmgate enforces, with Keycloak's ids, display names, config types and defaults. */
export const SUPPORTED_POLICIES: readonly PolicyType[] = [
  { id: 'length', displayName: 'Minimum Length', configType: 'int', defaultValue: '8', multipleSupported: false },
  { id: 'maxLength', displayName: 'Maximum Length', configType: 'int', defaultValue: '64', multipleSupported: false },
  { id: 'digits', displayName: 'Digits', configType: 'int', defaultValue: '1', multipleSupported: false },
  { id: 'lowerCase', displayName: 'Lowercase Characters', configType: 'int', defaultValue: '1', multipleSupported: false },
  { id: 'upperCase', displayName: 'Uppercase Characters', configType: 'int', defaultValue: '1', multipleSupported: false },
  { id: 'specialChars', displayName: 'Special Characters', configType: 'int', defaultValue: '1', multipleSupported: false },
  { id: 'notUsername', displayName: 'Not Username', configType: null, defaultValue: null, multipleSupported: false },
  { id: 'notEmail', displayName: 'Not Email', configType: null, defaultValue: null, multipleSupported: false },
  { id: 'notContainsUsername', displayName: 'Not Contains Username', configType: null, defaultValue: null, multipleSupported: false },
  { id: 'regexPattern', displayName: 'Regular Expression', configType: 'String', defaultValue: '', multipleSupported: true },
  { id: 'passwordHistory', displayName: 'Not Recently Used', configType: 'int', defaultValue: '3', multipleSupported: false },
  { id: 'forceExpiredPasswordChange', displayName: 'Expire Password', configType: 'String', defaultValue: '365', multipleSupported: false },
  // Not a rule on the password: how long after signing in a user may change it as an application-initiated
  // action (kc_action=UPDATE_PASSWORD) without signing in again; before UPDATE_PASSWORD's max_auth_age.
  { id: 'maxAuthAge', displayName: 'Maximum Authentication Age', configType: 'int', defaultValue: '300', multipleSupported: false },
];

/** Keycloak's policies Realmgate does not enforce, and why (said when one is set, and in the import's report). */
export const UNSUPPORTED_POLICIES: Readonly<Record<string, string>> = {
  hashAlgorithm: 'Realmgate hashes every password with argon2id (imported hashes are verified, then re-hashed at the next sign-in)',
  hashIterations: 'Realmgate hashes every password with argon2id at its own cost (imported hashes are verified, then re-hashed at the next sign-in)',
  passwordBlacklist: "the list is a file on Keycloak's server, not part of the realm",
  passwordAge: 'Realmgate does not keep the dates of earlier passwords (passwordHistory is enforced)',
  recoveryCodesWarningThreshold: 'Realmgate does not warn about recovery codes running out',
  notContainsName: 'not enforced by Realmgate',
  notPersonalInformation: 'not enforced by Realmgate',
};

/** A parsed policy: what each supported rule asks (absent: not asked), and its text as Realmgate keeps it. */
export interface PasswordPolicy {
  text: string;
  length?: number;
  maxLength?: number;
  digits?: number;
  lowerCase?: number;
  upperCase?: number;
  specialChars?: number;
  notUsername?: true;
  notEmail?: true;
  notContainsUsername?: true;
  regexPatterns?: string[];
  passwordHistory?: number;
  /** Days after which a password must be changed at the next sign-in. */
  forceExpiredPasswordChange?: number;
  /** Seconds after signing in within which kc_action=UPDATE_PASSWORD needs no new sign-in (src/admin/required-actions.ts, maxAuthAge). */
  maxAuthAge?: number;
}

export const EMPTY_POLICY: PasswordPolicy = { text: '' };

/** A rule of the policy left out, and why (the import reports them; the admin API refuses them). */
export interface LeftOut {
  id: string;
  reason: string;
}

const INT_RE = /^[+-]?\d{1,9}$/;

function intConfig(id: string, config: string | undefined, def: number, min: number, max: number, extra = ''): number {
  if (config === undefined) return def;
  if (!INT_RE.test(config)) throw new ValidationError(`invalid config for ${id}: ${JSON.stringify(config.slice(0, 40))} is not a whole number`);
  const n = Number(config);
  if (n < min || n > max) throw new ValidationError(`invalid config for ${id}: must be from ${min} to ${max}${extra}`);
  return n;
}

/** Compiles a regexPattern as Keycloak's Pattern.matches uses it (the whole password must match), or says why not. */
function checkRegex(config: string | undefined): string {
  if (config === undefined || config.trim() === '') throw new ValidationError('invalid config for regexPattern: a pattern is required');
  if (config.length > MAX_REGEX_LENGTH) throw new ValidationError(`invalid config for regexPattern: the pattern has more than ${MAX_REGEX_LENGTH} characters`);
  try {
    // Alone first: a pattern such as `a)|(.*` would otherwise escape the group that anchors it.
    new RegExp(config);
    new RegExp(`^(?:${config})$`);
  } catch {
    throw new ValidationError('invalid config for regexPattern: not a valid regular expression (JavaScript syntax)');
  }
  return config;
}

/** Splits Keycloak's syntax: `id(config) and id and ...` (PasswordPolicy.Builder). */
function split(text: string): Array<{ id: string; config: string | undefined; raw: string }> {
  const out: Array<{ id: string; config: string | undefined; raw: string }> = [];
  if (text.trim() === '') return out;
  for (const part of text.split(/\s+and\s+/)) {
    const raw = part.trim();
    // "a and and b", "a and": a rule is missing between two "and"s or after the last.
    if (raw === '' || raw === 'and' || /^and\s/.test(raw) || /\sand$/.test(raw)) throw new ValidationError('the password policy has an empty rule (policies are joined by " and ")');
    const i = raw.indexOf('(');
    if (i === -1) {
      if (!/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(raw)) throw new ValidationError(`${JSON.stringify(raw.slice(0, 64))} is not a password policy (expected name or name(value))`);
      out.push({ id: raw, config: undefined, raw });
      continue;
    }
    if (!raw.endsWith(')')) throw new ValidationError(`${JSON.stringify(raw.slice(0, 64))}: a closing parenthesis is missing`);
    const id = raw.slice(0, i).trim();
    if (!/^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(id)) throw new ValidationError(`${JSON.stringify(raw.slice(0, 64))} is not a password policy (expected name or name(value))`);
    out.push({ id, config: raw.slice(i + 1, -1), raw });
  }
  return out;
}

function applyRule(p: PasswordPolicy, id: string, config: string | undefined, parts: string[]): void {
  const count = (def: number): number => intConfig(id, config, def, 0, PASSWORD_FLOOR.max);
  switch (id) {
    case 'length':
      p.length = intConfig(id, config, 8, 0, PASSWORD_FLOOR.max, ` (Realmgate's passwords have at most ${PASSWORD_FLOOR.max} characters)`);
      break;
    case 'maxLength':
      p.maxLength = intConfig(id, config, 64, 1, 1_000_000);
      break;
    case 'digits':
      p.digits = count(1);
      break;
    case 'lowerCase':
      p.lowerCase = count(1);
      break;
    case 'upperCase':
      p.upperCase = count(1);
      break;
    case 'specialChars':
      p.specialChars = count(1);
      break;
    case 'notUsername':
    case 'notEmail':
    case 'notContainsUsername':
      // Keycloak ignores their config (its admin console sends "undefined").
      p[id] = true;
      parts.push(id);
      return;
    case 'regexPattern':
      if ((p.regexPatterns?.length ?? 0) >= MAX_REGEX_RULES) throw new ValidationError(`invalid config for regexPattern: at most ${MAX_REGEX_RULES} patterns (each is tested on every new password)`);
      (p.regexPatterns ??= []).push(checkRegex(config));
      parts.push(`regexPattern(${config})`);
      return;
    case 'passwordHistory':
      p.passwordHistory = intConfig(id, config, 3, 1, MAX_PASSWORD_HISTORY, ' (each earlier password is verified at every change)');
      break;
    case 'forceExpiredPasswordChange':
      p.forceExpiredPasswordChange = intConfig(id, config, 365, 1, 36_500);
      break;
    case 'maxAuthAge':
      p.maxAuthAge = intConfig(id, config, 300, 0, 999_999_999);
      break;
    default:
      throw new Error(`unhandled policy ${id}`);
  }
  parts.push(`${id}(${p[id as 'length']})`);
}

/** Why no password could ever satisfy the policy, if so. */
function impossible(p: PasswordPolicy): string | undefined {
  const { min, max } = effectiveLength(p);
  if (min > max) return `no password could have at least ${min} and at most ${max} characters`;
  const needed = (p.digits ?? 0) + (p.lowerCase ?? 0) + (p.upperCase ?? 0) + (p.specialChars ?? 0);
  if (needed > max) return `no password of at most ${max} characters could hold the ${needed} digits, letters and special characters asked for`;
  return undefined;
}

/**
 * Parses a policy strictly (the admin API, the CLI, the console): an unknown or unsupported policy, a bad
 * value, a duplicate or a policy no password could meet is refused with a ValidationError saying why.
 */
export function parsePasswordPolicy(text: string): PasswordPolicy {
  const { policy, leftOut } = readPasswordPolicy(text, { strict: true });
  if (leftOut.length > 0) throw new ValidationError(leftOut.map((l) => `${l.id}: ${l.reason}`).join('; '));
  return policy;
}

/**
 * Parses a policy. `strict` false (the import of a Keycloak realm): the rules Realmgate cannot enforce,
 * or whose value it refuses, are left out and returned (passwordHistory above 24 is kept as 24); the
 * rest is kept. A syntax error is refused either way.
 */
export function readPasswordPolicy(text: string, opts: { strict: boolean }): { policy: PasswordPolicy; leftOut: LeftOut[] } {
  if (typeof text !== 'string') throw new ValidationError('the password policy must be a string');
  if (text.length > 4096) throw new ValidationError('the password policy has more than 4096 characters');
  const policy: PasswordPolicy = { text: '' };
  const leftOut: LeftOut[] = [];
  const parts: string[] = [];
  const seen = new Set<string>();
  for (const { id, config } of split(text)) {
    const type = SUPPORTED_POLICIES.find((t) => t.id === id);
    if (!type) {
      const reason = UNSUPPORTED_POLICIES[id] ?? 'not a password policy Realmgate knows';
      leftOut.push({ id, reason: opts.strict ? `not supported: ${reason}` : reason });
      continue;
    }
    if (seen.has(id) && !type.multipleSupported) {
      if (opts.strict) throw new ValidationError(`${id} appears twice in the password policy`);
      leftOut.push({ id, reason: 'appears twice: the first is kept' });
      continue;
    }
    seen.add(id);
    try {
      const cfg = !opts.strict && id === 'passwordHistory' && config !== undefined && INT_RE.test(config) && Number(config) > MAX_PASSWORD_HISTORY ? String(MAX_PASSWORD_HISTORY) : config;
      if (cfg !== config) leftOut.push({ id, reason: `passwordHistory(${config}) kept as passwordHistory(${MAX_PASSWORD_HISTORY}), the most Realmgate keeps` });
      applyRule(policy, id, cfg, parts);
    } catch (err) {
      if (opts.strict || !(err instanceof ValidationError)) throw err;
      leftOut.push({ id, reason: err.message });
    }
  }
  const why = impossible(policy);
  if (why) throw new ValidationError(`the password policy cannot be met: ${why}`);
  policy.text = parts.join(' and ');
  return { policy, leftOut };
}

/** The policy a realm stored (parsed when it was set: a stored one that no longer parses counts as none but the floor). */
export function storedPolicy(text: string): PasswordPolicy {
  if (text === '') return EMPTY_POLICY;
  const cached = cache.get(text);
  if (cached) return cached;
  let p: PasswordPolicy;
  try {
    p = readPasswordPolicy(text, { strict: false }).policy;
  } catch {
    p = EMPTY_POLICY;
  }
  if (cache.size >= 64) cache.delete(cache.keys().next().value!);
  cache.set(text, p);
  return p;
}
const cache = new Map<string, PasswordPolicy>();

/** The lengths a password of this policy may have: the realm's within Realmgate's floor. */
export function effectiveLength(p: PasswordPolicy): { min: number; max: number } {
  return { min: Math.max(PASSWORD_FLOOR.min, p.length ?? 0), max: Math.min(PASSWORD_FLOOR.max, p.maxLength ?? PASSWORD_FLOOR.max) };
}

/** One rule a password fails: Keycloak's message key and parameter, and words for a sentence. */
export interface PolicyFailure {
  key: string;
  param?: number;
  /** Completes "The password must ...". */
  words: string;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function countOf(password: string, re: RegExp): number {
  let n = 0;
  for (const ch of password) if (re.test(ch)) n++;
  return n;
}

// Java's Character.isDigit, isLowerCase, isUpperCase and isLetterOrDigit, as Keycloak counts.
const DIGIT = /^\p{Nd}$/u;
const LOWER = /^\p{Lowercase}$/u;
const UPPER = /^\p{Uppercase}$/u;
const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}]$/u;

/**
 * Whether the whole password matches `pattern`. The administrator wrote it, but it runs on what users
 * type: a pattern with catastrophic backtracking could hold the event loop for minutes. So it runs in a
 * separate V8 context with a time limit (vm's timeout interrupts a running regular expression); a
 * password it cannot decide in time is refused.
 */
export function regexMatches(pattern: string, password: string): boolean {
  try {
    return vm.runInNewContext('new RegExp(p).test(s)', { p: `^(?:${pattern})$`, s: password }, { timeout: REGEX_TIMEOUT_MS }) === true;
  } catch {
    return false;
  }
}

/**
 * The rules of the policy (and of Realmgate's floor) the password fails, in the policy's order; [] when
 * it passes. The history is not looked at here (it needs the stored hashes).
 */
export function policyFailures(p: PasswordPolicy, input: { password: string; username?: string; email?: string | null }): PolicyFailure[] {
  const { password } = input;
  const out: PolicyFailure[] = [];
  const { min, max } = effectiveLength(p);
  if (password.length < min) out.push({ key: 'invalidPasswordMinLengthMessage', param: min, words: `have at least ${plural(min, 'character')}` });
  if (password.length > max) {
    out.push({ key: 'invalidPasswordMaxLengthMessage', param: max, words: `have at most ${plural(max, 'character')}` });
    // Nothing more is looked at in a password this long.
    return out;
  }
  const counts: Array<[number | undefined, RegExp | undefined, string, string]> = [
    [p.digits, DIGIT, 'invalidPasswordMinDigitsMessage', 'digit'],
    [p.lowerCase, LOWER, 'invalidPasswordMinLowerCaseCharsMessage', 'lower-case letter'],
    [p.upperCase, UPPER, 'invalidPasswordMinUpperCaseCharsMessage', 'upper-case letter'],
    [p.specialChars, undefined, 'invalidPasswordMinSpecialCharsMessage', 'special character'],
  ];
  for (const [n, re, key, what] of counts) {
    if (!n) continue;
    const have = re ? countOf(password, re) : [...password].length - countOf(password, LETTER_OR_DIGIT);
    if (have < n) out.push({ key, param: n, words: `contain at least ${plural(n, what)}` });
  }
  const username = input.username;
  if (p.notUsername && username !== undefined && password === username) out.push({ key: 'invalidPasswordNotUsernameMessage', words: 'not be the username' });
  if (p.notContainsUsername && username && password.toLowerCase().includes(username.toLowerCase())) out.push({ key: 'invalidPasswordNotContainsUsernameMessage', words: 'not contain the username' });
  if (p.notEmail && input.email && password.toLowerCase() === input.email.toLowerCase()) out.push({ key: 'invalidPasswordNotEmailMessage', words: 'not be the email address' });
  if ((p.regexPatterns ?? []).some((re) => !regexMatches(re, password))) out.push({ key: 'invalidPasswordRegexPatternMessage', words: "match the realm's required pattern" });
  return out;
}

/** passwordHistory's failure (the password is one of the last N). */
export function historyFailure(n: number): PolicyFailure {
  return { key: 'invalidPasswordHistoryMessage', param: n, words: `not be one of the last ${plural(n, 'password')}` };
}

// Keycloak's English texts of the keys (admin messages), {0} the parameter.
const KEYCLOAK_TEXT: Record<string, string> = {
  invalidPasswordMinLengthMessage: 'Invalid password: minimum length {0}.',
  invalidPasswordMaxLengthMessage: 'Invalid password: maximum length {0}.',
  invalidPasswordMinDigitsMessage: 'Invalid password: must contain at least {0} numerical digits.',
  invalidPasswordMinLowerCaseCharsMessage: 'Invalid password: must contain at least {0} lower case characters.',
  invalidPasswordMinUpperCaseCharsMessage: 'Invalid password: must contain at least {0} upper case characters.',
  invalidPasswordMinSpecialCharsMessage: 'Invalid password: must contain at least {0} special characters.',
  invalidPasswordNotUsernameMessage: 'Invalid password: must not be equal to the username.',
  invalidPasswordNotContainsUsernameMessage: 'Invalid password: Can not contain the username.',
  invalidPasswordNotEmailMessage: 'Invalid password: must not be equal to the email.',
  invalidPasswordRegexPatternMessage: 'Invalid password: fails to match regex pattern(s).',
  invalidPasswordHistoryMessage: 'Invalid password: must not be equal to any of last {0} passwords.',
};

/** Keycloak's text of a failure (what its admin API answers in error_description). */
export function keycloakText(f: PolicyFailure): string {
  return (KEYCLOAK_TEXT[f.key] ?? f.key).replace('{0}', String(f.param ?? ''));
}

function listWords(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * A password refused by the realm's policy (or Realmgate's floor): a ValidationError whose message is one
 * sentence naming every rule it fails ("the password must have at least 12 characters and contain at
 * least 1 digit"); `failures` keeps Keycloak's keys for the admin API.
 */
export class PasswordPolicyError extends ValidationError {
  constructor(readonly failures: PolicyFailure[]) {
    super(`the password must ${listWords(failures.map((f) => f.words))}`);
  }
}

/**
 * The policy in words for the pages, before the user types: e.g. "At least 12 characters, with at least
 * 1 digit and 1 upper-case letter. Not your username, nor one of your last 3 passwords."
 */
export function describePolicy(p: PasswordPolicy): string {
  const { min, max } = effectiveLength(p);
  const length = p.maxLength !== undefined && max < PASSWORD_FLOOR.max ? `${min} to ${max} characters` : `At least ${plural(min, 'character')}`;
  const counts = [
    p.digits ? plural(p.digits, 'digit') : '',
    p.lowerCase ? plural(p.lowerCase, 'lower-case letter') : '',
    p.upperCase ? plural(p.upperCase, 'upper-case letter') : '',
    p.specialChars ? plural(p.specialChars, 'special character') : '',
  ].filter(Boolean);
  const sentences = [`${length}${counts.length ? `, with at least ${listWords(counts)}` : ''}.`];
  const nots = [
    p.notUsername || p.notContainsUsername ? (p.notContainsUsername ? 'not containing your username' : 'not your username') : '',
    p.notEmail ? 'not your email address' : '',
    p.passwordHistory ? `not one of your last ${plural(p.passwordHistory, 'password')}` : '',
  ].filter(Boolean);
  if (nots.length) sentences.push(`${listWords(nots).replace(/^n/, 'N')}.`);
  if (p.regexPatterns?.length) sentences.push("It must also match your organization's pattern.");
  return sentences.join(' ');
}

/** What a password form shows before the user types: its lengths (the fields' minlength and maxlength) and the policy in words. */
export function passwordRule(policyText: string): { min: number; max: number; text: string } {
  const p = storedPolicy(policyText);
  return { ...effectiveLength(p), text: describePolicy(p) };
}
