import type { Services } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import type { Realm, RequiredAction, User } from '../../storage/types.js';
import { checkEmail, ConflictError, ValidationError } from '../validation.js';
import { changeUsername, checkEmailFree, checkPersonName } from './users.js';
import { verifyEmailTrigger } from './email-verification.js';
import type { ProfileValues } from '../../views/required-action-pages.js';

/** Keycloak's user attribute of TERMS_AND_CONDITIONS: one value, the acceptance time in seconds. */
export const TERMS_ATTRIBUTE = 'terms_and_conditions';

const without = (user: User, action: RequiredAction): RequiredAction[] => user.requiredActions.filter((a) => a !== action);

/**
 * Why the UPDATE_PROFILE form is refused, in the words of Keycloak's pages (the registration page's):
 * every field is required (Keycloak's default user profile), then the admin API's rules (checkEmail,
 * checkPersonName, checkEmailFree). [] when it may be saved.
 */
/** One reason the profile is refused, with the field it is about (Keycloak's ErrorRepresentation.field). */
export interface ProfileProblem {
  field: 'email' | 'firstName' | 'lastName';
  message: string;
}

async function profileProblems(services: Services, realm: Realm, user: User | undefined, v: ProfileValues): Promise<ProfileProblem[]> {
  const errors: ProfileProblem[] = [];
  const email = (message: string): number => errors.push({ field: 'email', message });
  if (v.email === '') email('Please specify email.');
  else {
    try {
      checkEmail(v.email);
      // Only a new email is checked (ignoring case), as the admin API's update does; with no user yet
      // (a provider's account under review), another user's email is not an error: it is that user's
      // account, linked once they prove it (the broker's link-account step).
      if (user && v.email.toLowerCase() !== (user.email ?? '').toLowerCase()) await checkEmailFree(services.store, realm, v.email, user.id);
    } catch (err) {
      if (err instanceof ConflictError) email('Email already exists.');
      else if (err instanceof ValidationError) email('Invalid email address.');
      else throw err;
    }
  }
  for (const [value, what, field] of [[v.firstName, 'first name', 'firstName'], [v.lastName, 'last name', 'lastName']] as const) {
    if (value === '') {
      errors.push({ field, message: `Please specify ${what}.` });
      continue;
    }
    try {
      checkPersonName(what, value);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      errors.push({ field, message: `Invalid ${what}.` });
    }
  }
  return errors;
}

/**
 * Keycloak's first broker login "Review Profile" (idp-review-profile, its default mode `missing`): why a
 * provider's account (or what the user typed on the review page) cannot make a user as it is: the same
 * rules as UPDATE_PROFILE's, another user's email aside. [] when complete.
 */
export async function reviewProblems(services: Services, realm: Realm, values: ProfileValues): Promise<string[]> {
  const v = { email: values.email.trim().toLowerCase(), firstName: values.firstName.trim(), lastName: values.lastName.trim() };
  return (await profileProblems(services, realm, undefined, v)).map((p) => p.message);
}

/**
 * Keycloak's UpdateProfile required action (and kc_action=UPDATE_PROFILE), submitted: the email and
 * names saved, UPDATE_PROFILE removed, recorded as UPDATE_PROFILE (and UPDATE_EMAIL when the email
 * changed). A changed email is no longer verified (Keycloak resets emailVerified on the profile pages),
 * and under the realm's verifyEmail the user verifies the new one next (VERIFY_EMAIL). A user of an LDAP
 * directory changes nothing here: the fields come from the directory (as Keycloak's read-only LDAP
 * attributes); submitting ends the action. Returns the errors to show ([]: done).
 */
export async function completeProfileUpdate(services: Services, input: { realm: Realm; user: User; values: ProfileValues; ip: string; clientId: string | null }): Promise<string[]> {
  return (await saveProfile(services, input, { endsAction: true })).map((p) => p.message);
}

/**
 * The user's own profile change through Keycloak's account REST API (POST /account): the same checks,
 * events and email rules as the profile pages, without ending an UPDATE_PROFILE action the user may
 * still have. Returns the problems ([]: saved).
 */
export function updateOwnProfile(services: Services, input: { realm: Realm; user: User; values: ProfileValues; ip: string; clientId: string | null }): Promise<ProfileProblem[]> {
  return saveProfile(services, input, { endsAction: false });
}

async function saveProfile(services: Services, input: { realm: Realm; user: User; values: ProfileValues; ip: string; clientId: string | null }, opts: { endsAction: boolean }): Promise<ProfileProblem[]> {
  const { realm, user } = input;
  const who = { realmId: realm.id, clientId: input.clientId, userId: user.id, username: user.username, ip: input.ip };
  const requiredActions = opts.endsAction ? without(user, 'UPDATE_PROFILE') : user.requiredActions;
  if (user.federationLink) {
    await services.store.users.update(user.id, { requiredActions });
    await services.audit.record({ ...who, type: 'UPDATE_PROFILE', outcome: 'success', reason: 'profile from the user directory (LDAP): unchanged' });
    return [];
  }
  const v = { email: input.values.email.trim().toLowerCase(), firstName: input.values.firstName.trim(), lastName: input.values.lastName.trim() };
  const errors = await profileProblems(services, realm, user, v);
  if (errors.length > 0) {
    await services.audit.record({ ...who, type: 'UPDATE_PROFILE_ERROR', outcome: 'failure', reason: errors.map((e) => e.message).join(' ') });
    return errors;
  }
  const emailChanged = v.email !== (user.email ?? '').toLowerCase();
  const emailVerified = emailChanged ? false : user.emailVerified;
  await services.store.users.update(user.id, { email: v.email, firstName: v.firstName, lastName: v.lastName, emailVerified, requiredActions });
  if (emailChanged) {
    await verifyEmailTrigger(services.store, realm, { ...user, ...v, emailVerified, requiredActions });
    await services.audit.record({ ...who, type: 'UPDATE_EMAIL', outcome: 'success', reason: `${user.email ?? '(none)'} -> ${v.email}` });
  }
  await services.audit.record({ ...who, type: 'UPDATE_PROFILE', outcome: 'success', reason: emailChanged ? 'email changed: not verified' : 'email unchanged' });
  return [];
}

/**
 * Keycloak's TermsAndConditions required action: Accept records the time (seconds) in the user's
 * terms_and_conditions attribute and ends the action; Decline removes the attribute and keeps the action
 * (the caller ends the sign-in with access_denied). Recorded as CUSTOM_REQUIRED_ACTION(_ERROR), as Keycloak.
 */
export async function answerTerms(services: Services, input: { realm: Realm; user: User; accepted: boolean; ip: string; clientId: string | null }): Promise<void> {
  const { user } = input;
  const { [TERMS_ATTRIBUTE]: _previous, ...others } = user.attributes;
  const who = { realmId: input.realm.id, clientId: input.clientId, userId: user.id, username: user.username, ip: input.ip };
  if (!input.accepted) {
    await services.store.users.update(user.id, { attributes: others });
    await services.audit.record({ ...who, type: 'CUSTOM_REQUIRED_ACTION_ERROR', outcome: 'failure', reason: 'TERMS_AND_CONDITIONS declined (rejected_by_user)' });
    return;
  }
  const attributes = { ...others, [TERMS_ATTRIBUTE]: [String(nowSeconds(services.clock))] };
  await services.store.users.update(user.id, { attributes, requiredActions: without(user, 'TERMS_AND_CONDITIONS') });
  await services.audit.record({ ...who, type: 'CUSTOM_REQUIRED_ACTION', outcome: 'success', reason: 'TERMS_AND_CONDITIONS accepted' });
}

/** A posted form's text field (undefined when absent or not text). */
type FormField = (name: string) => string | undefined;

/**
 * The UPDATE_PROFILE form as posted, each field bounded before any check (`values`), and as shown again
 * with the errors (`shown`: within the inputs' maxlength). One reading for every page that has the form
 * (a sign-in's, the account page's, a mailed link's).
 */
export function profileForm(field: FormField): { values: ProfileValues; shown: ProfileValues } {
  const values: ProfileValues = { email: (field('email') ?? '').slice(0, 1024), firstName: (field('firstName') ?? '').slice(0, 1024), lastName: (field('lastName') ?? '').slice(0, 1024) };
  return { values, shown: { email: values.email.slice(0, 320), firstName: values.firstName.slice(0, 255), lastName: values.lastName.slice(0, 255) } };
}

/** The terms form's answer: Accept pressed, not Decline. */
export const termsAccepted = (field: FormField): boolean => !field('cancel') && field('accept') !== undefined;

/**
 * The user's own username change (the account page, the account REST API), where the realm allows it:
 * changeUsername's rules (it throws as that does), recorded as UPDATE_PROFILE. Returns the username stored.
 */
export async function renameOwnAccount(services: Services, input: { realm: Realm; user: User; username: string; ip: string; clientId: string | null }): Promise<string> {
  const { realm, user } = input;
  const renamed = await changeUsername(services.store, { realm, user, username: input.username });
  if (renamed !== user.username) {
    await services.audit.record({ realmId: realm.id, clientId: input.clientId, userId: user.id, username: renamed, ip: input.ip, type: 'UPDATE_PROFILE', outcome: 'success', reason: `username ${user.username} -> ${renamed}` });
  }
  return renamed;
}
