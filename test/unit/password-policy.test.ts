import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describePolicy,
  keycloakText,
  parsePasswordPolicy,
  PasswordPolicyError,
  policyFailures,
  readPasswordPolicy,
  regexMatches,
  REGEX_TIMEOUT_MS,
  SUPPORTED_POLICIES,
} from '../../src/admin/password-policy.js';
import { ValidationError } from '../../src/admin/validation.js';

const keys = (policy: string, password: string, who: { username?: string; email?: string } = {}): string[] =>
  policyFailures(parsePasswordPolicy(policy), { password, ...who }).map((f) => `${f.key}${f.param !== undefined ? `(${f.param})` : ''}`);

test("Keycloak's syntax: name(value) joined by ' and ', spacing around 'and' free; the text kept is Realmgate's canonical one", () => {
  const p = parsePasswordPolicy('length(12) and digits(2)   and upperCase(1) and notUsername(undefined) and passwordHistory(5)');
  assert.deepEqual({ length: p.length, digits: p.digits, upperCase: p.upperCase, notUsername: p.notUsername, passwordHistory: p.passwordHistory }, { length: 12, digits: 2, upperCase: 1, notUsername: true, passwordHistory: 5 });
  assert.equal(p.text, 'length(12) and digits(2) and upperCase(1) and notUsername and passwordHistory(5)');
  assert.equal(parsePasswordPolicy('').text, '');
  assert.equal(parsePasswordPolicy('   ').text, '');
  // The canonical text reads back to itself.
  assert.equal(parsePasswordPolicy(p.text).text, p.text);
});

test("Keycloak's defaults when the value is omitted: length 8, maxLength 64, counts 1, passwordHistory 3, forceExpiredPasswordChange 365", () => {
  const p = parsePasswordPolicy('length and maxLength and digits and lowerCase and upperCase and specialChars and passwordHistory and forceExpiredPasswordChange');
  assert.deepEqual(
    { length: p.length, maxLength: p.maxLength, digits: p.digits, lowerCase: p.lowerCase, upperCase: p.upperCase, specialChars: p.specialChars, passwordHistory: p.passwordHistory, expire: p.forceExpiredPasswordChange },
    { length: 8, maxLength: 64, digits: 1, lowerCase: 1, upperCase: 1, specialChars: 1, passwordHistory: 3, expire: 365 },
  );
  // maxAuthAge: Keycloak's default 300 s; 0 (a sign-in every time) is a value of its own.
  assert.deepEqual([parsePasswordPolicy('maxAuthAge').maxAuthAge, parsePasswordPolicy('maxAuthAge(0)').maxAuthAge, parsePasswordPolicy('maxAuthAge(0)').text], [300, 0, 'maxAuthAge(0)']);
  // serverinfo says the same defaults.
  const defaults = Object.fromEntries(SUPPORTED_POLICIES.map((t) => [t.id, t.defaultValue]));
  assert.deepEqual([defaults.length, defaults.maxLength, defaults.digits, defaults.passwordHistory, defaults.forceExpiredPasswordChange], ['8', '64', '1', '3', '365']);
});

test('bad syntax and bad values are refused with a message naming them', () => {
  const cases: Array<[string, RegExp]> = [
    ['length(12', /closing parenthesis/],
    ['length(abc)', /invalid config for length: "abc" is not a whole number/],
    ['length()', /invalid config for length/],
    ['length(-1)', /length: must be from 0 to 1024/],
    ['length(2000)', /at most 1024 characters/],
    ['length(8) and and digits(1)', /empty rule/],
    ['length(8) and', /empty rule/],
    ['length(8) and length(9)', /length appears twice/],
    ['passwordHistory(25)', /passwordHistory: must be from 1 to 24/],
    ['forceExpiredPasswordChange(0)', /must be from 1 to 36500/],
    ['maxAuthAge(-1)', /maxAuthAge: must be from 0 to 999999999/],
    ['maxAuthAge(soon)', /invalid config for maxAuthAge: "soon" is not a whole number/],
    ['regexPattern', /a pattern is required/],
    ['regexPattern(   )', /a pattern is required/],
    ['regexPattern([a-)', /not a valid regular expression/],
    ['regexPattern(a)|(.*)', /not a valid regular expression/],
    [`regexPattern(${'a'.repeat(257)})`, /more than 256 characters/],
    [Array.from({ length: 6 }, (_, i) => `regexPattern(.*${i}.*)`).join(' and '), /at most 5 patterns/],
    ['length(20) and maxLength(10)', /cannot be met: no password could have at least 20 and at most 10 characters/],
    ['digits(600) and upperCase(600)', /cannot be met/],
    ['hashAlgorithm(pbkdf2-sha512)', /hashAlgorithm: not supported: Realmgate hashes every password with argon2id/],
    ['hashIterations(27500)', /hashIterations: not supported/],
    ['passwordBlacklist(list.txt)', /passwordBlacklist: not supported: the list is a file on Keycloak's server/],
    ['noSuchPolicy(1)', /noSuchPolicy: not supported: not a password policy Realmgate knows/],
    ['length(8) digits(1)', /invalid config for length: "8\) digits\(1" is not a whole number/],
  ];
  for (const [text, message] of cases) assert.throws(() => parsePasswordPolicy(text), (err: Error) => err instanceof ValidationError && message.test(err.message), text);
});

test('import mode: unsupported and invalid rules are left out by name, the rest kept; passwordHistory above 24 kept as 24', () => {
  const r = readPasswordPolicy('length(12) and hashIterations(27500) and passwordBlacklist(x.txt) and digits(x) and passwordHistory(30) and notEmail', { strict: false });
  assert.equal(r.policy.text, 'length(12) and passwordHistory(24) and notEmail');
  assert.deepEqual(
    r.leftOut.map((l) => l.id),
    ['hashIterations', 'passwordBlacklist', 'digits', 'passwordHistory'],
  );
  assert.match(r.leftOut.find((l) => l.id === 'passwordBlacklist')!.reason, /file on Keycloak's server/);
  // What is kept is accepted as it is by the strict parser (the admin API, the CLI).
  assert.equal(parsePasswordPolicy(r.policy.text).text, r.policy.text);
});

test("each rule: Keycloak's message keys and parameters; Realmgate's 8 to 1024 characters underneath", () => {
  assert.deepEqual(keys('', 'short'), ['invalidPasswordMinLengthMessage(8)']);
  assert.deepEqual(keys('length(6)', 'seven77'), ['invalidPasswordMinLengthMessage(8)'], 'length(6) still needs 8');
  assert.deepEqual(keys('length(12)', 'elevenchars'), ['invalidPasswordMinLengthMessage(12)']);
  assert.deepEqual(keys('length(12)', 'twelve chars'), []);
  assert.deepEqual(keys('maxLength(10)', 'elevenchars'), ['invalidPasswordMaxLengthMessage(10)']);
  assert.deepEqual(keys('maxLength(2000)', 'x'.repeat(1025)), ['invalidPasswordMaxLengthMessage(1024)'], 'maxLength(2000) still 1024');
  assert.deepEqual(keys('digits(2)', 'password1'), ['invalidPasswordMinDigitsMessage(2)']);
  assert.deepEqual(keys('digits(2)', 'password12'), []);
  assert.deepEqual(keys('digits(1)', 'password\u0663'), [], 'an Arabic-Indic digit counts, as Character.isDigit');
  assert.deepEqual(keys('lowerCase(2)', 'PASSWORDa'), ['invalidPasswordMinLowerCaseCharsMessage(2)']);
  assert.deepEqual(keys('upperCase(1)', 'password'), ['invalidPasswordMinUpperCaseCharsMessage(1)']);
  assert.deepEqual(keys('upperCase(1)', 'passwordÉ'), []);
  assert.deepEqual(keys('specialChars(2)', 'password!'), ['invalidPasswordMinSpecialCharsMessage(2)']);
  assert.deepEqual(keys('specialChars(2)', 'pass word!'), []);
  assert.deepEqual(keys('notUsername', 'alice-the-user', { username: 'alice-the-user' }), ['invalidPasswordNotUsernameMessage']);
  assert.deepEqual(keys('notUsername', 'alice-the-user2', { username: 'alice-the-user' }), []);
  assert.deepEqual(keys('notContainsUsername', 'xxALICExx1', { username: 'alice' }), ['invalidPasswordNotContainsUsernameMessage']);
  assert.deepEqual(keys('notEmail', 'Alice@Example.com', { email: 'alice@example.com' }), ['invalidPasswordNotEmailMessage']);
  assert.deepEqual(keys('notEmail', 'alice@example.org', { email: 'alice@example.com' }), []);
  assert.deepEqual(keys('regexPattern([a-z]+[0-9]+)', 'abcdefgh1'), []);
  // The whole password must match (Java's Pattern.matches), not a part of it.
  assert.deepEqual(keys('regexPattern([a-z]+[0-9]+)', 'abcdefgh1!'), ['invalidPasswordRegexPatternMessage']);
  assert.deepEqual(keys('regexPattern(.*[0-9].*) and regexPattern(.*[A-Z].*)', 'abcdefgh1'), ['invalidPasswordRegexPatternMessage'], 'every pattern must match');
  // Every rule failed is named, in order.
  assert.deepEqual(keys('length(12) and digits(1) and upperCase(1)', 'short'), ['invalidPasswordMinLengthMessage(12)', 'invalidPasswordMinDigitsMessage(1)', 'invalidPasswordMinUpperCaseCharsMessage(1)']);
});

test('the error: one sentence naming every rule failed; Keycloak texts for the admin API', () => {
  const failures = policyFailures(parsePasswordPolicy('length(12) and digits(1)'), { password: 'short' });
  const err = new PasswordPolicyError(failures);
  assert.ok(err instanceof ValidationError);
  assert.equal(err.message, 'the password must have at least 12 characters and contain at least 1 digit');
  assert.equal(new PasswordPolicyError(policyFailures(parsePasswordPolicy(''), { password: 'short' })).message, 'the password must have at least 8 characters');
  assert.equal(keycloakText(failures[0]!), 'Invalid password: minimum length 12.');
  assert.equal(keycloakText(failures[1]!), 'Invalid password: must contain at least 1 numerical digits.');
});

test('the hint the pages show before the user types', () => {
  assert.equal(describePolicy(parsePasswordPolicy('')), 'At least 8 characters.');
  assert.equal(
    describePolicy(parsePasswordPolicy('length(12) and digits(1) and upperCase(1) and notUsername and passwordHistory(3)')),
    'At least 12 characters, with at least 1 digit and 1 upper-case letter. Not your username and not one of your last 3 passwords.',
  );
  assert.equal(describePolicy(parsePasswordPolicy('length(10) and maxLength(64) and regexPattern(.*)')), "10 to 64 characters. It must also match your organization's pattern.");
});

test('regexPattern cannot hold the event loop: a catastrophic pattern is cut at the time limit and the password refused', () => {
  const p = parsePasswordPolicy('regexPattern((a+)+)');
  const started = Date.now();
  const failures = policyFailures(p, { password: `${'a'.repeat(40)}!` });
  const took = Date.now() - started;
  assert.deepEqual(failures.map((f) => f.key), ['invalidPasswordRegexPatternMessage']);
  assert.ok(took < REGEX_TIMEOUT_MS * 20, `took ${took} ms`);
  assert.equal(regexMatches('(a+)+', 'aaaa'), true);
});
