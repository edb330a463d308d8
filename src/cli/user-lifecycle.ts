import type { Command } from 'commander';
import { CliError, collect, onOff, withStore } from './common.js';
import { tellingClients } from './backchannel.js';
import { ATTRIBUTE_HELP, attributesFrom } from './user-attributes.js';
import {
  bruteForceStatus,
  deleteUser,
  disableUser,
  enableUser,
  logoutUser,
  revokeConsent,
  unlockUser,
  updateUser,
  userConsents,
  userSessions,
} from '../admin/operations.js';

function time(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** `user update|disable|enable|delete|sessions|logout|consents|revoke-consent|unlock`: a user's lifecycle. */
export function registerUserLifecycle(user: Command): void {
  user
    .command('update <realm> <user>')
    .description('change a user (by username or id): email, names, enabled, organizations, attributes, required actions at the next sign-in')
    .option('--email <email>', 'new email address ("" removes it)')
    .option('--first-name <name>', 'new first name ("" removes it)')
    .option('--last-name <name>', 'new last name ("" removes it)')
    .option('--email-verified <yes|no>', 'whether the email address is verified')
    .option('--org <alias>', 'the user belongs to exactly these organizations afterwards (repeatable)', collect)
    .option('--no-orgs', 'remove the user from every organization')
    .option('--enabled', 'enable the user')
    .option('--disabled', 'disable the user (ends sessions, revokes tokens)')
    .option('--attribute <name=value>', `${ATTRIBUTE_HELP}; the values given replace that name's, other attributes stay`, collect, [])
    .option('--remove-attribute <name>', 'remove this attribute (repeatable)', collect, [])
    .option('--require-otp-setup <on|off>', "on: the user sets up an authenticator app at the next sign-in (Keycloak's CONFIGURE_TOTP required action); off: no longer asked", onOff('--require-otp-setup'))
    .option('--require-webauthn-setup <on|off>', "on: the user registers a security key at the next sign-in (Keycloak's webauthn-register required action); off: no longer asked", onOff('--require-webauthn-setup'))
    .option('--require-email-verification <on|off>', "on: the user verifies their email through a mailed link at the next sign-in (Keycloak's VERIFY_EMAIL required action); off: no longer asked", onOff('--require-email-verification'))
    .option('--require-profile-update <on|off>', "on: the user reviews their email and names at the next sign-in (Keycloak's UPDATE_PROFILE required action); off: no longer asked", onOff('--require-profile-update'))
    .option('--require-terms <on|off>', "on: the user accepts the realm's terms at the next sign-in (Keycloak's TERMS_AND_CONDITIONS required action); off: no longer asked", onOff('--require-terms'))
    .option('--require-account-deletion <on|off>', "on: the user confirms the deletion of their account at the next sign-in (Keycloak's delete_account required action; asked only while the realm enables it); off: no longer asked", onOff('--require-account-deletion'))
    .action(async (realmId: string, ref: string, o: { requireProfileUpdate?: boolean; requireTerms?: boolean; requireAccountDeletion?: boolean; email?: string; firstName?: string; lastName?: string; emailVerified?: string; org?: string[]; orgs: boolean; enabled?: boolean; disabled?: boolean; attribute: string[]; removeAttribute: string[]; requireOtpSetup?: boolean; requireWebauthnSetup?: boolean; requireEmailVerification?: boolean }) => {
      if (o.emailVerified !== undefined && o.emailVerified !== 'yes' && o.emailVerified !== 'no') throw new CliError('--email-verified takes yes or no');
      if (o.enabled && o.disabled) throw new CliError('use either --enabled or --disabled, not both');
      if (o.org && !o.orgs) throw new CliError('use either --org or --no-orgs, not both');
      const organizations = o.orgs ? o.org : [];
      const setAttributes = attributesFrom(o.attribute);
      const both = o.removeAttribute.filter((name) => Object.hasOwn(setAttributes, name));
      if (both.length > 0) throw new CliError(`attribute ${JSON.stringify(both[0])} is both set and removed`);
      const u = await withStore((store) =>
        tellingClients(store, (s) => updateUser(s, {
          realmId,
          user: ref,
          ...(o.email !== undefined ? { email: o.email === '' ? null : o.email } : {}),
          ...(o.firstName !== undefined ? { firstName: o.firstName === '' ? null : o.firstName } : {}),
          ...(o.lastName !== undefined ? { lastName: o.lastName === '' ? null : o.lastName } : {}),
          ...(o.emailVerified !== undefined ? { emailVerified: o.emailVerified === 'yes' } : {}),
          ...(organizations !== undefined ? { organizations } : {}),
          ...(o.enabled ? { enabled: true } : o.disabled ? { enabled: false } : {}),
          ...(o.attribute.length > 0 ? { setAttributes } : {}),
          ...(o.removeAttribute.length > 0 ? { removeAttributes: o.removeAttribute } : {}),
          ...(o.requireOtpSetup !== undefined ? { requireOtpSetup: o.requireOtpSetup } : {}),
          ...(o.requireWebauthnSetup !== undefined ? { requireWebAuthnSetup: o.requireWebauthnSetup } : {}),
          ...(o.requireEmailVerification !== undefined ? { requireEmailVerification: o.requireEmailVerification } : {}),
          ...(o.requireProfileUpdate !== undefined ? { requireProfileUpdate: o.requireProfileUpdate } : {}),
          ...(o.requireTerms !== undefined ? { requireTerms: o.requireTerms } : {}),
          ...(o.requireAccountDeletion !== undefined ? { requireAccountDeletion: o.requireAccountDeletion } : {}),
        })),
      );
      process.stdout.write(`updated user ${u.username} in realm ${realmId}${u.requiredActions.length > 0 ? ` (required actions: ${u.requiredActions.join(', ')})` : ''}\n`);
    });
  user
    .command('disable <realm> <user>')
    .description('disable a user: their sessions end and their tokens are refused at once')
    .action(async (realmId: string, ref: string) => {
      const u = await withStore((store) => tellingClients(store, (s) => disableUser(s, { realmId, user: ref })));
      process.stdout.write(`disabled user ${u.username} in realm ${realmId}\n`);
    });
  user
    .command('enable <realm> <user>')
    .description('enable a disabled user')
    .action(async (realmId: string, ref: string) => {
      const u = await withStore((store) => enableUser(store, { realmId, user: ref }));
      process.stdout.write(`enabled user ${u.username} in realm ${realmId}\n`);
    });
  user
    .command('delete <realm> <user>')
    .description('delete a user with their sessions, tokens, consents and memberships')
    .action(async (realmId: string, ref: string) => {
      const u = await withStore((store) => tellingClients(store, (s) => deleteUser(s, { realmId, user: ref })));
      process.stdout.write(`deleted user ${u.username} from realm ${realmId}\n`);
    });
  user
    .command('sessions <realm> <user>')
    .description("list a user's live browser sessions and the clients holding tokens from each")
    .action(async (realmId: string, ref: string) => {
      const sessions = await withStore((store) => userSessions(store, { realmId, user: ref }), { access: 'read' });
      process.stdout.write('session\tstarted\tlast access\taddress\tclients\n');
      for (const s of sessions) process.stdout.write(`${s.id}\t${time(s.createdAt)}\t${time(s.lastAccess)}\t${s.ipAddress ?? '-'}\t${s.clients.join(' ')}\n`);
    });
  user
    .command('logout <realm> <user>')
    .description("end every session of a user and revoke all of their refresh tokens")
    .action(async (realmId: string, ref: string) => {
      const r = await withStore((store) => tellingClients(store, (s) => logoutUser(s, { realmId, user: ref })));
      process.stdout.write(`ended ${r.sessions} session(s) and revoked ${r.chains} token chain(s)\n`);
    });
  user
    .command('consents <realm> <user>')
    .description('list the scopes a user granted, per client')
    .action(async (realmId: string, ref: string) => {
      const consents = await withStore((store) => userConsents(store, { realmId, user: ref }), { access: 'read' });
      for (const c of consents) process.stdout.write(`${c.clientId}\t${c.scopes.join(' ')}\n`);
    });
  user
    .command('revoke-consent <realm> <user> <client-id>')
    .description("withdraw a user's consent to a client and revoke that client's tokens for the user")
    .action(async (realmId: string, ref: string, clientId: string) => {
      await withStore((store) => tellingClients(store, (s) => revokeConsent(s, { realmId, user: ref, clientId })));
      process.stdout.write(`revoked the consent of ${ref} to ${clientId}\n`);
    });
  user
    .command('unlock <realm> <user>')
    .description('show and clear the failed-login lockout of a user')
    .action(async (realmId: string, ref: string) => {
      const { status, u } = await withStore(async (store) => ({ status: await bruteForceStatus(store, { realmId, user: ref }), u: await unlockUser(store, { realmId, user: ref }) }));
      process.stdout.write(`${u.username}: ${status.numFailures} failure(s), ${status.disabled ? `was locked for ${status.lockedFor} more seconds` : 'was not locked'}; unlocked\n`);
    });
}
