import { Option, type Command } from 'commander';
import { CliError, intArg, notBeforeOptions, onOff, readStdin, runNotBefore, withStore, type NotBeforeOptions } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { createRealm, deleteRealm, revokeBefore, updateRealm } from '../admin/operations.js';
import type { RealmSettings } from '../storage/repos/realms.js';
import { OPTIONAL_EVENT_TYPES } from '../events/stored-types.js';
import { MAX_EVENTS_RETENTION_S } from '../admin/keycloak/event-types.js';
import type { BrokerReviewProfile } from '../storage/types.js';
import { registerRealmTransfer } from './realm-transfer.js';
import { registerRealmRequiredActions } from './realm-required-actions.js';
import { registerRealmLocalization } from './realm-localization.js';
import { describePolicy, storedPolicy, SUPPORTED_POLICIES } from '../admin/password-policy.js';

/** A realm's retention in days, as seconds; `default` is 0 (commander keeps no null): the server's setting. */
function retentionDays(name: string) {
  const days = intArg(name, { min: 1, max: MAX_EVENTS_RETENTION_S / 86_400 });
  return (v: string): number => (v === 'default' ? 0 : days(v) * 86_400);
}

function realmSettingOptions(cmd: Command): Command {
  return cmd
    .option('--code-lifetime <s>', 'authorization code lifetime in seconds, 30 to 50 (default 45)', intArg('code lifetime'))
    .option('--access-token-lifetime <s>', 'access token lifetime in seconds (default 259200)', intArg('access token lifetime'))
    .option('--refresh-idle-lifetime <s>', 'lifetime of each refresh token in seconds, at most the refresh max lifetime (default 15552000)', intArg('refresh idle lifetime'))
    .option('--refresh-max-lifetime <s>', 'maximum lifetime of a chain of refreshes in seconds (default 63072000)', intArg('refresh max lifetime'))
    .option('--sso-session-lifetime <s>', 'browser session lifetime in seconds (default 36000)', intArg('SSO session lifetime'))
    .option('--audience <aud>', 'aud claim of access tokens (default "account")')
    .option('--max-login-failures <n>', 'failed logins of a username before it is locked (default 5)', intArg('max login failures'))
    .option('--lockout-seconds <s>', 'first lockout; each further one doubles (default 60)', intArg('lockout seconds'))
    .option('--max-lockout-seconds <s>', 'longest lockout (default 900)', intArg('max lockout seconds'))
    .addOption(new Option('--signing-alg <alg>', 'signing algorithm of new keys').choices(['RS256', 'ES256', 'EdDSA']))
    .option('--refresh-grace-seconds <s>', 'refresh concurrency grace: a rotated token presented again within this window gets a successor instead of revoking its chain; 0 turns it off (default 0)', intArg('refresh grace seconds'))
    .option('--refresh-grace-max <n>', 'the most successors the grace window gives after one rotation (default 1)', intArg('refresh grace max'))
    .option(
      '--stored-events <types>',
      `comma-separated optional event types to store, or "none": ${OPTIONAL_EVENT_TYPES.join(', ')} (default all but REFRESH_TOKEN and CLIENT_INFO; failures, logins, consents, reuse and revocations are always stored)`,
    )
    .option('--events-retention-days <days>', 'keep the realm\'s login and token events this many days (at most 7305), or "default": REALMGATE_EVENTS_RETENTION_DAYS (90)', retentionDays('events retention'))
    .option('--admin-events-retention-days <days>', 'keep the realm\'s admin events this many days (at most 7305), or "default": REALMGATE_ADMIN_EVENTS_RETENTION_DAYS (365)', retentionDays('admin events retention'))
    .addOption(new Option('--access-token-format <format>', "access tokens as Keycloak's JWTs (jwt, the default) or RFC 9068 JWTs (header typ at+jwt, claim client_id)").choices(['jwt', 'rfc9068']))
    .option('--reset-password-allowed <on|off>', 'on: the login page offers "Forgot password?" (mails a reset link; needs the SMTP settings); default off', onOff('--reset-password-allowed'))
    .option('--action-token-lifespan <s>', 'how long a mailed reset link works, in seconds (default 300)', intArg('action token lifespan'))
    .option('--registration-allowed <on|off>', 'on: the login page offers "Register" (self-registration, docs/registration.md); default off', onOff('--registration-allowed'))
    .option('--registration-email-as-username <on|off>', 'on: the registration form asks no username, the email is the username; default off', onOff('--registration-email-as-username'))
    .addOption(new Option('--broker-review-profile <mode>', "at a first sign-in through an identity provider, the user reviews the account it gives: missing (only when it lacks an email or a name; the default), on (always) or off (never); Keycloak's Review Profile update.profile.on.first.login").choices(['missing', 'on', 'off']))
    .option('--edit-username <on|off>', "on: users may change their username on the account page (and the account REST API), administrators through the admin API (Keycloak's editUsernameAllowed); default off", onOff('--edit-username'))
    .option('--verify-email <on|off>', 'on: a user whose email is not verified must follow a mailed link before signing in (needs the SMTP settings); default off', onOff('--verify-email'))
    .option('--par-request-uri-lifespan <s>', "how long a pushed authorization request's request_uri works, in seconds, 1 to 3600 (RFC 9126; Keycloak's parRequestUriLifespan; default 60)", intArg('request_uri lifespan'))
    .option('--admin-action-token-lifespan <s>', 'how long a link an administrator mails (send-actions-email) works, in seconds (default 43200)', intArg('admin action token lifespan'))
    .option('--login-with-email <on|off>', "on: users may sign in with their email instead of their username, when no other user has it (Keycloak's loginWithEmailAllowed); default on", onOff('--login-with-email'))
    .option('--duplicate-emails <on|off>', "on: several users may have the same email, which turns --login-with-email off (Keycloak's duplicateEmailsAllowed); default off", onOff('--duplicate-emails'))
    .option('--remember-me <on|off>', 'on: the login page offers "Remember me": a sign-in cookie that outlives the browser (Keycloak\'s rememberMe); default off', onOff('--remember-me'))
    .option('--remember-me-idle-timeout <s>', 'a remembered session ends after this many seconds unused; 0: never for being unused, as other sessions (Keycloak\'s ssoSessionIdleTimeoutRememberMe; default 0)', intArg('remember-me idle timeout', { min: 0, max: 366 * 86_400 }))
    .option('--remember-me-max-lifetime <s>', 'a remembered session and its cookie last this many seconds; 0: the SSO session lifetime (Keycloak\'s ssoSessionMaxLifespanRememberMe; default 0)', intArg('remember-me max lifetime', { min: 0, max: 366 * 86_400 }))
    .option('--internationalization <on|off>', "on: the pages may be shown in the user's language among --supported-locales (Keycloak's internationalizationEnabled); default off", onOff('--internationalization'))
    .option('--supported-locales <tags>', 'comma-separated locales the pages may be shown in, e.g. de,fr,en (at most 100; language tags such as de-CH), or "none"')
    .option('--default-locale <tag>', 'the locale when none of the user\'s is supported (Keycloak\'s defaultLocale; need not be among --supported-locales, as Keycloak), or "none" (English)')
    .option(
      '--password-policy <policy>',
      `Keycloak's password policy, e.g. 'length(12) and digits(1) and upperCase(1) and notUsername and passwordHistory(3)', or "none"; supported: ${SUPPORTED_POLICIES.map((p) => p.id).join(', ')}. Realmgate's own 8 to 1024 characters stay underneath`,
    );
}

/** The realm's SMTP settings (Keycloak's smtpServer): only on update, merged into what the realm has. */
function smtpOptions(cmd: Command): Command {
  return cmd
    .option('--smtp-host <host>', 'SMTP server to send the realm\'s mail through (reset links, send-actions-email)')
    .option('--smtp-port <port>', 'its port (default 25, or 465 with --smtp-ssl on)', intArg('SMTP port', { min: 1, max: 65_535 }))
    .option('--smtp-from <address>', 'sender address of the mail')
    .option('--smtp-from-display-name <name>', 'sender name shown')
    .option('--smtp-reply-to <address>', 'Reply-To address')
    .option('--smtp-user <user>', 'SMTP user (turns authentication on)')
    .option('--smtp-password-stdin', 'read the SMTP password from stdin (stored encrypted; never shown; needed again with a new --smtp-host or --smtp-port: the stored one goes only to its own server)')
    .option('--smtp-starttls <on|off>', 'upgrade the connection with STARTTLS (required when on)', onOff('--smtp-starttls'))
    .option('--smtp-ssl <on|off>', 'connect with TLS from the start (SMTPS, port 465)', onOff('--smtp-ssl'))
    .option('--no-smtp', 'remove the SMTP settings (the realm sends no mail)');
}

/** The smtpServer map after the --smtp-* options, from `current`; undefined when none was given. */
function smtpFrom(o: Record<string, unknown>, current: Record<string, string>): Record<string, string> | undefined {
  if (o.smtp === false) return {};
  const m: Record<string, string> = { ...current };
  const set = (key: string, v: unknown): void => {
    if (v !== undefined) m[key] = String(v);
  };
  set('host', o.smtpHost);
  set('port', o.smtpPort);
  set('from', o.smtpFrom);
  set('fromDisplayName', o.smtpFromDisplayName);
  set('replyTo', o.smtpReplyTo);
  set('user', o.smtpUser);
  if (o.smtpUser !== undefined) m.auth = 'true';
  set('starttls', o.smtpStarttls);
  set('ssl', o.smtpSsl);
  const given = ['smtpHost', 'smtpPort', 'smtpFrom', 'smtpFromDisplayName', 'smtpReplyTo', 'smtpUser', 'smtpStarttls', 'smtpSsl', 'smtpPasswordStdin'].some((k) => o[k] !== undefined);
  return given ? m : undefined;
}

function settingsFrom(o: Record<string, unknown>): Partial<RealmSettings> {
  const s: Partial<RealmSettings> = {};
  if (o.codeLifetime !== undefined) s.codeLifetime = o.codeLifetime as number;
  if (o.accessTokenLifetime !== undefined) s.accessTokenLifetime = o.accessTokenLifetime as number;
  if (o.refreshIdleLifetime !== undefined) s.refreshIdleLifetime = o.refreshIdleLifetime as number;
  if (o.refreshMaxLifetime !== undefined) s.refreshMaxLifetime = o.refreshMaxLifetime as number;
  if (o.ssoSessionLifetime !== undefined) s.ssoSessionLifetime = o.ssoSessionLifetime as number;
  if (o.audience !== undefined) s.accessTokenAudience = o.audience as string;
  if (o.signingAlg !== undefined) s.signingAlg = o.signingAlg as string;
  if (o.accessTokenFormat !== undefined) s.accessTokenFormat = o.accessTokenFormat as 'jwt' | 'rfc9068';
  if (o.maxLoginFailures !== undefined) s.maxLoginFailures = o.maxLoginFailures as number;
  if (o.lockoutSeconds !== undefined) s.lockoutSeconds = o.lockoutSeconds as number;
  if (o.maxLockoutSeconds !== undefined) s.maxLockoutSeconds = o.maxLockoutSeconds as number;
  if (o.refreshGraceSeconds !== undefined) s.refreshGraceSeconds = o.refreshGraceSeconds as number;
  if (o.refreshGraceMax !== undefined) s.refreshGraceMax = o.refreshGraceMax as number;
  if (typeof o.storedEvents === 'string') s.storedEventTypes = o.storedEvents === 'none' ? [] : [...new Set(o.storedEvents.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
  if (o.organizationRequired !== undefined) s.organizationRequired = o.organizationRequired === 'on';
  if (o.eventsRetentionDays !== undefined) s.eventsRetention = (o.eventsRetentionDays as number) || null;
  if (o.adminEventsRetentionDays !== undefined) s.adminEventsRetention = (o.adminEventsRetentionDays as number) || null;
  if (o.resetPasswordAllowed !== undefined) s.resetPasswordAllowed = o.resetPasswordAllowed as boolean;
  if (o.actionTokenLifespan !== undefined) s.actionTokenUserLifespan = o.actionTokenLifespan as number;
  if (o.adminActionTokenLifespan !== undefined) s.actionTokenAdminLifespan = o.adminActionTokenLifespan as number;
  if (o.parRequestUriLifespan !== undefined) s.parRequestUriLifespan = o.parRequestUriLifespan as number;
  if (o.registrationAllowed !== undefined) s.registrationAllowed = o.registrationAllowed as boolean;
  if (o.registrationEmailAsUsername !== undefined) s.registrationEmailAsUsername = o.registrationEmailAsUsername as boolean;
  if (o.verifyEmail !== undefined) s.verifyEmail = o.verifyEmail as boolean;
  if (o.editUsername !== undefined) s.editUsernameAllowed = o.editUsername as boolean;
  if (o.brokerReviewProfile !== undefined) s.brokerReviewProfile = o.brokerReviewProfile as BrokerReviewProfile;
  if (typeof o.passwordPolicy === 'string') s.passwordPolicy = o.passwordPolicy.trim() === 'none' ? '' : o.passwordPolicy;
  if (o.loginWithEmail !== undefined) s.loginWithEmailAllowed = o.loginWithEmail as boolean;
  if (o.duplicateEmails !== undefined) s.duplicateEmailsAllowed = o.duplicateEmails as boolean;
  if (o.rememberMe !== undefined) s.rememberMe = o.rememberMe as boolean;
  if (o.rememberMeIdleTimeout !== undefined) s.ssoIdleRememberMe = o.rememberMeIdleTimeout as number;
  if (o.rememberMeMaxLifetime !== undefined) s.ssoMaxRememberMe = o.rememberMeMaxLifetime as number;
  if (o.internationalization !== undefined) s.internationalizationEnabled = o.internationalization as boolean;
  if (typeof o.supportedLocales === 'string') s.supportedLocales = o.supportedLocales.trim() === 'none' ? [] : o.supportedLocales.split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (typeof o.defaultLocale === 'string') s.defaultLocale = o.defaultLocale.trim() === 'none' || o.defaultLocale.trim() === '' ? null : o.defaultLocale.trim();
  return s;
}

export function registerRealm(program: Command): void {
  const realm = program.command('realm').description('manage realms');
  registerRealmTransfer(realm);
  registerRealmRequiredActions(realm);
  registerRealmLocalization(realm);
  
  realmSettingOptions(realm.command('create <realm>').description('create a realm with the default scopes and a signing key'))
    .option('--display-name <name>', 'name shown on the login pages (at most 255 characters, no control characters)')
    .action(async (id: string, o: Record<string, unknown>) => {
      await withStore((store) => createRealm(store, { id, displayName: o.displayName as string | undefined, settings: settingsFrom(o) }), { keys: true, access: 'create' });
      process.stdout.write(`created realm ${id}\n`);
    });
  
  smtpOptions(realmSettingOptions(realm.command('update <realm>').description("change a realm's settings")))
    .option('--display-name <name>', 'name shown on the login pages (at most 255 characters, no control characters)')
    .addOption(new Option('--organization-required <on|off>', 'on: a user of no organization gets no code; off: such a user signs in without the organization claim').choices(['on', 'off']))
    .option('--default-role <name>', "a realm role every new user of the realm is given (Keycloak's default role, usually a composite); users already there keep their roles")
    .action(async (id: string, o: Record<string, unknown>) => {
      const settings = settingsFrom(o);
      const password = o.smtpPasswordStdin ? await readStdin() : undefined;
      await withStore(async (store) => {
        const current = await store.realms.get(id);
        if (!current) throw new CliError(`realm ${id} does not exist`);
        const smtp = smtpFrom(o, current.smtpServer);
        if (smtp !== undefined) settings.smtpServer = smtp;
        // Removing the settings removes the password with them.
        const smtpPassword = o.smtp === false ? null : password;
        return updateRealm(store, {
          realmId: id,
          settings,
          ...(o.displayName !== undefined ? { displayName: o.displayName as string } : {}),
          ...(smtpPassword !== undefined ? { smtpPassword } : {}),
          ...(o.defaultRole !== undefined ? { defaultRole: { name: o.defaultRole as string } } : {}),
        });
      });
      process.stdout.write(`updated realm ${id}\n`);
    });
  
  realm
    .command('show <realm>')
    .description("show a realm's settings, its password policy among them (control characters shown escaped)")
    .action(async (id: string) => {
      const { r, defaultRole } = await withStore(async (store) => {
        const found = await store.realms.get(id);
        if (!found) throw new CliError(`realm ${id} does not exist`);
        return { r: found, defaultRole: found.defaultRoleId ? await store.roles.get(found.defaultRoleId) : undefined };
      }, { access: 'read' });
      const policy = storedPolicy(r.passwordPolicy);
      const lines: Array<[string, string]> = [
        ['realm', r.id],
        ['display name', r.displayName ?? ''],
        ['enabled', r.enabled ? 'yes' : 'no'],
        ['code lifetime', `${r.codeLifetime} s`],
        ['access token', `${r.accessTokenLifetime} s, ${r.accessTokenFormat}, audience ${r.accessTokenAudience}, ${r.signingAlg}`],
        ['refresh token', `${r.refreshIdleLifetime} s idle, chain at most ${r.refreshMaxLifetime} s`],
        ['SSO session', `${r.ssoSessionLifetime} s`],
        ['login with email', r.loginWithEmailAllowed ? 'on' : 'off'],
        ['duplicate emails', r.duplicateEmailsAllowed ? 'allowed' : 'refused'],
        ['remember me', r.rememberMe ? `on (idle ${r.ssoIdleRememberMe ? `${r.ssoIdleRememberMe} s` : 'none'}, at most ${r.ssoMaxRememberMe || r.ssoSessionLifetime} s)` : 'off'],
        ['login failures', `${r.maxLoginFailures} before a lockout of ${r.lockoutSeconds} s (at most ${r.maxLockoutSeconds} s)`],
        ['organizations', r.organizationRequired ? 'required' : 'optional'],
        ['default role', defaultRole ? defaultRole.name : 'none (new users get no role)'],
        ['password policy', r.passwordPolicy === '' ? 'none (Realmgate: 8 to 1024 characters)' : r.passwordPolicy],
        ['internationalization', r.internationalizationEnabled ? 'on' : 'off'],
        ['supported locales', r.supportedLocales.length > 0 ? r.supportedLocales.join(', ') : 'none'],
        ['default locale', r.defaultLocale ?? 'none (English)'],
        ['registration', r.registrationAllowed ? `allowed${r.registrationEmailAsUsername ? ', the email is the username' : ''}` : 'not allowed'],
        ['verify email', r.verifyEmail ? 'yes' : 'no'],
        ['edit username', r.editUsernameAllowed ? 'yes: users may change their username' : 'no'],
        ['broker review', { missing: 'when the provider\'s account lacks something (missing)', on: 'always (on)', off: 'never (off)' }[r.brokerReviewProfile]],
        ['passwords', describePolicy(policy) + (policy.forceExpiredPasswordChange ? ` Changed every ${policy.forceExpiredPasswordChange} days.` : '')],
      ];
      process.stdout.write(lines.map(([k, v]) => `${k}:${' '.repeat(Math.max(1, 18 - k.length))}${terminalSafe(v)}\n`).join(''));
    });

  realm
    .command('list')
    .description('list realms (name, tab, display name; control characters shown escaped)')
    .action(async () => {
      const realms = await withStore((store) => store.realms.list(), { access: 'read' });
      // A display name stored before control characters were refused must not drive the terminal.
      for (const r of realms) process.stdout.write(`${r.id}\t${terminalSafe(r.displayName ?? '')}\n`);
    });
  
  notBeforeOptions(realm.command('revoke-before <realm>').description("refuse every token issued before a time (the realm's not-before policy); without options, show it")).action(
    async (realmId: string, o: NotBeforeOptions) => {
      await withStore((store) =>
        runNotBefore(
          o,
          `realm ${realmId}`,
          async () => {
            const r = await store.realms.get(realmId);
            if (!r) throw new CliError(`realm ${realmId} does not exist`);
            return r.notBefore;
          },
          (at) => revokeBefore(store, { realmId, at }),
        ),
      );
    },
  );

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    realm
      .command(`${name} <realm>`)
      .description(enabled ? 'serve a disabled realm again' : 'stop serving a realm: its pages, token and discovery endpoints answer as if it did not exist (its data and admin API stay)')
      .action(async (id: string) => {
        await withStore((store) => updateRealm(store, { realmId: id, enabled }));
        process.stdout.write(`realm ${id} ${enabled ? 'enabled' : 'disabled'}\n`);
      });
  }

  realm
    .command('delete <realm>')
    .description('delete a realm with all its users, clients, organizations, tokens and events')
    .option('--yes', 'really delete (required)')
    .action(async (id: string, o: { yes?: boolean }) => {
      if (!o.yes) throw new CliError(`deleting realm ${id} and everything in it cannot be undone: add --yes`);
      await withStore((store) => deleteRealm(store, { realmId: id }));
      process.stdout.write(`deleted realm ${id}\n`);
    });
}
