// The realm's password policy in the page's language: the rule a form says before the user types
// (src/admin/password-policy.ts describePolicy), and the sentence naming the rules a password fails
// (PasswordPolicyError). Their English is those functions' words, exactly: a route uses these only when
// their English matches what the policy module says (localizedRule, localizedFailures), else its words.
import { effectiveLength, passwordRule, PASSWORD_FLOOR, storedPolicy, type PasswordPolicy, type PolicyFailure } from '../admin/password-policy.js';
import type { MessageKey } from '../i18n/catalog.js';
import { ENGLISH, Msg, t, withTranslator, type Text } from '../i18n/translator.js';
import type { PasswordRule } from './pages.js';

/** "a, b and c" in the current language. */
function list(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return t('listAnd', items.slice(0, -1).join(', '), items[items.length - 1]!);
}

const count = (n: number, one: MessageKey, many: MessageKey): string => (n === 1 ? t(one) : t(many, n));

/** describePolicy's words in the current language. */
export function policyRuleText(p: PasswordPolicy): string {
  const { min, max } = effectiveLength(p);
  const length = p.maxLength !== undefined && max < PASSWORD_FLOOR.max ? t('passwordRuleRange', min, max) : t('passwordRuleMin', min);
  const counts = [
    p.digits ? count(p.digits, 'passwordRuleDigitsOne', 'passwordRuleDigits') : '',
    p.lowerCase ? count(p.lowerCase, 'passwordRuleLowerCaseOne', 'passwordRuleLowerCase') : '',
    p.upperCase ? count(p.upperCase, 'passwordRuleUpperCaseOne', 'passwordRuleUpperCase') : '',
    p.specialChars ? count(p.specialChars, 'passwordRuleSpecialCharsOne', 'passwordRuleSpecialChars') : '',
  ].filter(Boolean);
  const sentences = [counts.length ? t('passwordRuleWithCounts', length, list(counts)) : t('passwordRuleSentence', length)];
  const nots = [
    p.notUsername || p.notContainsUsername ? t(p.notContainsUsername ? 'passwordRuleNotContainsUsername' : 'passwordRuleNotUsername') : '',
    p.notEmail ? t('passwordRuleNotEmail') : '',
    p.passwordHistory ? count(p.passwordHistory, 'passwordRuleHistoryOne', 'passwordRuleHistory') : '',
  ].filter(Boolean);
  if (nots.length) {
    const words = list(nots);
    sentences.push(t('passwordRuleSentence', words.charAt(0).toUpperCase() + words.slice(1)));
  }
  if (p.regexPatterns?.length) sentences.push(t('passwordRuleRegexPattern'));
  return sentences.join(' ');
}

const FAILURES: Readonly<Record<string, [MessageKey, MessageKey]>> = {
  invalidPasswordMinLengthMessage: ['passwordFailMinLength', 'passwordFailMinLength'],
  invalidPasswordMaxLengthMessage: ['passwordFailMaxLength', 'passwordFailMaxLength'],
  invalidPasswordMinDigitsMessage: ['passwordFailDigitsOne', 'passwordFailDigits'],
  invalidPasswordMinLowerCaseCharsMessage: ['passwordFailLowerCaseOne', 'passwordFailLowerCase'],
  invalidPasswordMinUpperCaseCharsMessage: ['passwordFailUpperCaseOne', 'passwordFailUpperCase'],
  invalidPasswordMinSpecialCharsMessage: ['passwordFailSpecialCharsOne', 'passwordFailSpecialChars'],
  invalidPasswordNotUsernameMessage: ['passwordFailNotUsername', 'passwordFailNotUsername'],
  invalidPasswordNotContainsUsernameMessage: ['passwordFailNotContainsUsername', 'passwordFailNotContainsUsername'],
  invalidPasswordNotEmailMessage: ['passwordFailNotEmail', 'passwordFailNotEmail'],
  invalidPasswordRegexPatternMessage: ['passwordFailRegexPattern', 'passwordFailRegexPattern'],
  invalidPasswordHistoryMessage: ['passwordFailHistoryOne', 'passwordFailHistory'],
};

/** "The password must ..." in the current language; undefined for a failure of a kind not known here. */
export function failureSentence(failures: readonly PolicyFailure[]): string | undefined {
  const words: string[] = [];
  for (const f of failures) {
    const keys = FAILURES[f.key];
    if (!keys) return undefined;
    words.push(f.param === 1 ? t(keys[0], 1) : t(keys[1], f.param ?? ''));
  }
  return t('passwordMustSentence', list(words));
}

/** Words composed in the language of the page they are rendered on (a Msg whose text is made by `compose`). */
class Composed extends Msg {
  constructor(private readonly compose: () => string) {
    super('passwordMustSentence');
  }
  override toString(): string {
    return this.compose();
  }
}

/** `compose` as Text when its English is `english` exactly; else `english` itself. */
function checked(compose: () => string | undefined, english: string): Text {
  if (withTranslator(ENGLISH, compose) !== english) return english;
  return new Composed(() => compose() ?? english);
}

/** passwordRule(policyText) with its words in the language of the page it is shown on. */
export function localizedRule(policyText: string): PasswordRule {
  const rule = passwordRule(policyText);
  const policy = storedPolicy(policyText);
  return { ...rule, text: checked(() => policyRuleText(policy), rule.text) };
}

/** A refusal's sentence of `failures` (its English `english`) in the page's language. */
export function localizedFailures(failures: readonly PolicyFailure[], english: string): Text {
  return checked(() => failureSentence(failures), english);
}
