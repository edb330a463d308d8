import { REQUIRED_ACTIONS, type Realm, type RequiredAction, type RequiredActionSetting, type User } from '../storage/types.js';
import { storedPolicy } from './password-policy.js';
import { ValidationError } from './validation.js';

/**
 * Keycloak's required-action settings of a realm (RequiredActionProviderRepresentation: enabled,
 * defaultAction, priority, config), for the actions Realmgate acts on. A realm stores only the actions
 * configured (admin API, console, CLI, import); the others have the defaults below, which keep
 * Realmgate's order from before the settings existed: all enabled, none a default action.
 */

/** Keycloak's display names (its `name`). */
export const REQUIRED_ACTION_NAMES: Record<RequiredAction, string> = {
  UPDATE_PASSWORD: 'Update Password',
  CONFIGURE_TOTP: 'Configure OTP',
  'webauthn-register': 'Webauthn Register',
  'webauthn-register-passwordless': 'Webauthn Register Passwordless',
  TERMS_AND_CONDITIONS: 'Terms and Conditions',
  UPDATE_PROFILE: 'Update Profile',
  VERIFY_EMAIL: 'Verify Email',
  delete_account: 'Delete Account',
  idp_link: 'Linking Identity Provider',
  delete_credential: 'Delete Credential',
};

/** A config key Realmgate reads: TERMS_AND_CONDITIONS' text (plain text, shown escaped). */
export const TERMS_TEXT = 'terms_text';
const TERMS_TEXT_MAX = 20_000;

/**
 * Keycloak's max_auth_age (every required action's config since Keycloak 25): how many seconds after the
 * user's last sign-in the action may be done as an application-initiated action (kc_action) without
 * signing in again; 0: always sign in again. Keycloak's default is 300.
 */
export const MAX_AUTH_AGE = 'max_auth_age';
export const DEFAULT_MAX_AUTH_AGE = 300;
/** Keycloak reads the value as a Java int. */
const MAX_AUTH_AGE_LIMIT = 2_147_483_647;

export const DEFAULT_TERMS_TEXT =
  'By continuing you agree to the terms and conditions of this service. The administrator of this realm has not written them out here yet: ask them for the full text.';

/**
 * Realmgate's defaults: every action enabled (as before the settings existed), except delete_account,
 * which Keycloak registers disabled: users may delete their own account only once an administrator says so.
 */
function defaultSetting(action: RequiredAction): RequiredActionSetting {
  return { enabled: action !== 'delete_account', defaultAction: false, priority: (REQUIRED_ACTIONS.indexOf(action) + 1) * 10, config: {} };
}

/** The action's settings in the realm: as configured, else the defaults. */
export function requiredActionSetting(realm: Pick<Realm, 'requiredActionSettings'>, action: RequiredAction): RequiredActionSetting {
  return realm.requiredActionSettings[action] ?? defaultSetting(action);
}

/** Every action Realmgate acts on with its settings, by priority (then Realmgate's order), as Keycloak lists them. */
export function requiredActionList(realm: Pick<Realm, 'requiredActionSettings'>): { alias: RequiredAction; setting: RequiredActionSetting }[] {
  return REQUIRED_ACTIONS.map((alias) => ({ alias, setting: requiredActionSetting(realm, alias) })).sort(
    (a, b) => a.setting.priority - b.setting.priority || REQUIRED_ACTIONS.indexOf(a.alias) - REQUIRED_ACTIONS.indexOf(b.alias),
  );
}

/** The user's actions the realm asks (enabled ones; a disabled one stays on the user, as in Keycloak), in the order they are asked. */
export function pendingActions(realm: Pick<Realm, 'requiredActionSettings'>, user: Pick<User, 'requiredActions'>): RequiredAction[] {
  return requiredActionList(realm)
    .filter((a) => a.setting.enabled && user.requiredActions.includes(a.alias))
    .map((a) => a.alias);
}

/** Keycloak's defaultAction: what every new user of the realm gets (enabled actions only). */
export function defaultActions(realm: Pick<Realm, 'requiredActionSettings'>): RequiredAction[] {
  return REQUIRED_ACTIONS.filter((a) => {
    const s = requiredActionSetting(realm, a);
    return s.enabled && s.defaultAction;
  });
}

/**
 * Keycloak 25's RequiredActionConfigInfoRepresentation (GET .../required-actions/{alias}/config-description):
 * the config keys `alias` takes, as ConfigPropertyRepresentations (Keycloak's type names: String, Text).
 */
export function requiredActionConfigDescription(alias: RequiredAction): { properties: Record<string, unknown>[] } {
  // Keycloak's DeleteAccount takes no config (its max auth age is always 0).
  if (alias === 'delete_account') return { properties: [] };
  const properties: Record<string, unknown>[] = [
    {
      name: MAX_AUTH_AGE,
      label: 'Maximum Age of Authentication',
      helpText: `Seconds since the user last signed in within which an application may send them to this action (kc_action) without signing in again; 0 asks for a sign-in every time. Default: ${DEFAULT_MAX_AUTH_AGE}.`,
      type: 'String',
      defaultValue: String(DEFAULT_MAX_AUTH_AGE),
      secret: false,
      required: false,
      readOnly: false,
    },
  ];
  if (alias === 'TERMS_AND_CONDITIONS') {
    properties.push({
      name: TERMS_TEXT,
      label: 'Terms text',
      helpText: `The terms the page shows, as plain text (a blank line between paragraphs), at most ${TERMS_TEXT_MAX} characters; empty: Realmgate's placeholder text.`,
      type: 'Text',
      secret: false,
      required: false,
      readOnly: false,
    });
  }
  return { properties };
}

/**
 * The action's max_auth_age in the realm: for UPDATE_PASSWORD the password policy's maxAuthAge first (as
 * Keycloak), then the action's config, else Keycloak's default.
 */
export function maxAuthAge(realm: Pick<Realm, 'requiredActionSettings' | 'passwordPolicy'>, action: RequiredAction): number {
  // Keycloak's DeleteAccount has a fixed max auth age of 0 (and no config): deleting always follows a new sign-in.
  if (action === 'delete_account') return 0;
  const policy = action === 'UPDATE_PASSWORD' ? storedPolicy(realm.passwordPolicy).maxAuthAge : undefined;
  if (policy !== undefined) return policy;
  const v = requiredActionSetting(realm, action).config[MAX_AUTH_AGE];
  return v === undefined ? DEFAULT_MAX_AUTH_AGE : Number(v);
}

/** The text the TERMS_AND_CONDITIONS page shows. */
export function termsText(realm: Pick<Realm, 'requiredActionSettings'>): string {
  const t = requiredActionSetting(realm, 'TERMS_AND_CONDITIONS').config[TERMS_TEXT];
  return t && t.trim() !== '' ? t : DEFAULT_TERMS_TEXT;
}

export function isRequiredAction(alias: string): alias is RequiredAction {
  return (REQUIRED_ACTIONS as readonly string[]).includes(alias);
}

/** An action with config keys (Keycloak's configurable required actions): every one Realmgate acts on but delete_account. */
export function isConfigurableAction(alias: string): alias is RequiredAction {
  return isRequiredAction(alias) && configKeys(alias).length > 0;
}

/** The config keys `alias` takes: max_auth_age for every action but delete_account, and terms_text for TERMS_AND_CONDITIONS. */
export function configKeys(alias: RequiredAction): string[] {
  return alias === 'TERMS_AND_CONDITIONS' ? [MAX_AUTH_AGE, TERMS_TEXT] : alias === 'delete_account' ? [] : [MAX_AUTH_AGE];
}

/**
 * A config map as Keycloak's RequiredActionConfigRepresentation holds it (strings; an empty one removed,
 * as Keycloak's removeEmptyString does), checked: terms_text plain text, max_auth_age a whole number of
 * seconds (a JSON number is taken as its digits, as Keycloak's JSON reader does). Keys `alias` does not
 * take are returned in `ignored`.
 */
export function readRequiredActionConfig(alias: RequiredAction, c: unknown): { config: Record<string, string>; ignored: string[] } {
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw new ValidationError('config must be an object of strings');
  const config: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [k, raw] of Object.entries(c as Record<string, unknown>)) {
    if (!configKeys(alias).includes(k)) {
      ignored.push(k);
      continue;
    }
    if (raw === null || raw === '') continue;
    if (k === TERMS_TEXT) {
      if (typeof raw !== 'string' || raw.length > TERMS_TEXT_MAX || /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(raw)) throw new ValidationError(`config.${TERMS_TEXT} must be plain text of at most ${TERMS_TEXT_MAX} characters`);
      if (raw.trim() !== '') config[k] = raw;
    } else {
      const v = typeof raw === 'number' ? String(raw) : raw;
      if (typeof v !== 'string' || !/^\d{1,10}$/.test(v) || Number(v) > MAX_AUTH_AGE_LIMIT) throw new ValidationError(`config.${MAX_AUTH_AGE} must be a whole number of seconds from 0 to ${MAX_AUTH_AGE_LIMIT}`);
      config[k] = String(Number(v));
    }
  }
  return { config, ignored };
}

/**
 * A representation's settings read onto `current`: enabled and defaultAction booleans, priority an
 * integer, config an object of strings (readRequiredActionConfig); absent fields keep theirs. Config keys
 * Realmgate does not read are returned in `ignored` (the admin API refuses them, the import reports
 * them). Wrong types: a ValidationError.
 */
export function readRequiredActionSetting(alias: RequiredAction, body: Record<string, unknown>, current: RequiredActionSetting): { setting: RequiredActionSetting; ignored: string[] } {
  const setting: RequiredActionSetting = { ...current, config: { ...current.config } };
  for (const k of ['enabled', 'defaultAction'] as const) {
    const v = body[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') throw new ValidationError(`${k} must be true or false`);
    setting[k] = v;
  }
  const p = body.priority;
  if (p !== undefined && p !== null) {
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 1_000_000) throw new ValidationError('priority must be an integer from 0 to 1000000');
    setting.priority = p;
  }
  let ignored: string[] = [];
  const c = body.config;
  if (c !== undefined && c !== null) ({ config: setting.config, ignored } = readRequiredActionConfig(alias, c));
  if (setting.defaultAction && !setting.enabled) throw new ValidationError(`${alias} is disabled: a disabled required action cannot be a default action`);
  return { setting, ignored };
}

/** The stored JSON read leniently (an unknown alias or a broken entry: the defaults). */
export function storedRequiredActionSettings(json: string | null | undefined): Partial<Record<RequiredAction, RequiredActionSetting>> {
  let v: unknown;
  try {
    v = JSON.parse(json ?? '{}');
  } catch {
    return {};
  }
  if (!v || typeof v !== 'object') return {};
  const out: Partial<Record<RequiredAction, RequiredActionSetting>> = {};
  for (const [alias, body] of Object.entries(v as Record<string, unknown>)) {
    if (!isRequiredAction(alias) || !body || typeof body !== 'object') continue;
    try {
      out[alias] = readRequiredActionSetting(alias, body as Record<string, unknown>, defaultSetting(alias)).setting;
    } catch {
      // A broken entry: the defaults.
    }
  }
  return out;
}

/** Keycloak's RequiredActionProviderRepresentation of one action. */
export function requiredActionRepresentation(alias: RequiredAction, s: RequiredActionSetting): Record<string, unknown> {
  return { alias, name: REQUIRED_ACTION_NAMES[alias], providerId: alias, enabled: s.enabled, defaultAction: s.defaultAction, priority: s.priority, config: { ...s.config } };
}

/** A report of what the import did with one realm's requiredActions list. */
export interface RequiredActionsImport {
  settings: Partial<Record<RequiredAction, RequiredActionSetting>>;
  /** One line per action kept, and per problem. */
  notes: string[];
}

/**
 * Keycloak's requiredActions list of a realm export: the settings of the actions Realmgate acts on (the
 * others are reported by the importer as before). A defaultAction on a disabled action is dropped, a
 * config key Realmgate does not read is reported; a broken entry keeps the defaults, with a note.
 */
export function importRequiredActionSettings(list: unknown, opts: { deleteAccountRoleForAll?: boolean; deleteAccountRoleImported?: boolean } = {}): RequiredActionsImport {
  const settings: Partial<Record<RequiredAction, RequiredActionSetting>> = {};
  const notes: string[] = [];
  for (const entry of Array.isArray(list) ? list : []) {
    if (!entry || typeof entry !== 'object') continue;
    const body = entry as Record<string, unknown>;
    const alias = typeof body.alias === 'string' ? body.alias : '';
    if (!isRequiredAction(alias)) continue;
    // Keycloak lets a user delete their account only with the account client's delete-account role. Imported
    // with the built-in clients, the role and its holders come along and Realmgate asks for it too; without
    // them the realm has no such role and the enabled action lets every user: enabled then only when the
    // realm's default roles gave that role to every user.
    const roleless = alias === 'delete_account' && body.enabled === true && !opts.deleteAccountRoleForAll && !opts.deleteAccountRoleImported;
    const off = body.enabled === false || roleless;
    const fixed = roleless || (off && body.defaultAction === true) ? { ...body, enabled: !off, defaultAction: off ? false : body.defaultAction } : body;
    try {
      const { setting, ignored } = readRequiredActionSetting(alias, fixed, defaultSetting(alias));
      settings[alias] = setting;
      let why = fixed !== body ? ' (defaultAction dropped: the action is disabled)' : '';
      if (roleless) {
        why = " (enabled in Keycloak, but only users with the account client's delete-account role may delete their account there, and the realm's default roles do not give it: without the built-in clients Realmgate has no such role, and enabling the action lets every user delete their own account)";
      } else if (alias === 'delete_account' && setting.enabled) {
        why = opts.deleteAccountRoleImported
          ? " (as in Keycloak: users with the account client's delete-account role, imported with the built-in clients)"
          : " (every user may delete their own account: the realm's default roles give Keycloak's delete-account role)";
      }
      notes.push(`${alias} ${setting.enabled ? 'enabled' : 'disabled'}${setting.defaultAction ? ', default action' : ''}, priority ${setting.priority}${setting.config[MAX_AUTH_AGE] !== undefined ? `, max auth age ${setting.config[MAX_AUTH_AGE]} s` : ''}${why}${ignored.length > 0 ? ` (config ${ignored.join(', ')} not read)` : ''}`);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      notes.push(`${alias}: ${err.message}; Realmgate's defaults kept`);
    }
  }
  return { settings, notes };
}
