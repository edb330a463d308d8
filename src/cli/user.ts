import { registerUserActionsEmail } from './user-actions-email.js';
import type { Command } from 'commander';
import { collect, intArg, passwordFrom, withStore } from './common.js';
import { tellingClients } from './backchannel.js';
import { createUser, listUsers, setUserPassword } from '../admin/operations.js';
import { registerUserLifecycle } from './user-lifecycle.js';
import { registerUserOtp } from './user-otp.js';
import { registerUserWebAuthn } from './user-webauthn.js';
import { registerUserFederatedIdentity } from './user-federated-identity.js';
import { usersWithOtp } from '../admin/operations/user-credentials.js';
import { hasPassword } from '../crypto/passwords.js';
import { registerUserGroups } from './group.js';
import { ATTRIBUTE_HELP, attributesFrom } from './user-attributes.js';
import { terminalJson } from './terminal-text.js';

export function registerUser(program: Command): void {
  const user = program.command('user').description('manage users');
  user
    .command('create <realm> <username>')
    .description('create a user (the password is stored as an argon2id hash)')
    .option('--password <pw>', 'the password (visible in the process list: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--email <email>', 'email address')
    .option('--first-name <name>', 'given name (the given_name claim; name joins first and last)')
    .option('--last-name <name>', 'family name (the family_name claim)')
    .option('--email-verified', 'the email address is known to belong to the user (the email_verified claim)')
    .option('--org <alias>', 'make the user a member of this organization (repeatable)', collect, [])
    .option('--group <path>', "put the user in this group, /parent/child (repeatable; the realm's default groups are joined anyway)", collect, [])
    .option('--attribute <name=value>', ATTRIBUTE_HELP, collect, [])
    .option('--temporary', "the password is temporary: the user must choose a new one at the next sign-in (Keycloak's UPDATE_PASSWORD required action; the password grant refuses the user until then)")
    .action(
      async (
        realmId: string,
        username: string,
        o: { password?: string; passwordStdin?: boolean; email?: string; firstName?: string; lastName?: string; emailVerified?: boolean; org: string[]; group: string[]; attribute: string[]; temporary?: boolean },
      ) => {
      const attributes = attributesFrom(o.attribute);
      const password = await passwordFrom(o);
      await withStore((store) =>
        createUser(store, {
          realmId,
          username,
          password,
          ...(o.email ? { email: o.email } : {}),
          ...(o.firstName !== undefined ? { firstName: o.firstName } : {}),
          ...(o.lastName !== undefined ? { lastName: o.lastName } : {}),
          ...(o.emailVerified ? { emailVerified: true } : {}),
          orgAliases: o.org,
          ...(o.group.length > 0 ? { groups: o.group } : {}),
          ...(o.attribute.length > 0 ? { attributes } : {}),
          temporary: Boolean(o.temporary),
        }),
      );
      process.stdout.write(`created user ${username.toLowerCase()} in realm ${realmId}${o.temporary ? ' (temporary password: a new one is asked for at the next sign-in)' : ''}\n`);
      },
    );
  user
    .command('set-password <realm> <username>')
    .description(
      "replace a user's password; signs the user out of every browser and revokes every refresh token (and so the access tokens issued with them). Without --temporary the password is permanent: a pending request to choose a new one ends, as with Keycloak's reset-password",
    )
    .option('--password <pw>', 'the new password')
    .option('--password-stdin', 'read the new password from standard input')
    .option('--keep-offline-sessions', 'keep refresh tokens granted offline_access (other sessions still end)')
    .option('--temporary', "the password is temporary: the user must choose a new one at the next sign-in (Keycloak's UPDATE_PASSWORD required action; the password grant refuses the user until then)")
    .action(async (realmId: string, username: string, o: { password?: string; passwordStdin?: boolean; keepOfflineSessions?: boolean; temporary?: boolean }) => {
      const password = await passwordFrom(o);
      const r = await withStore((store) => tellingClients(store, (s) => setUserPassword(s, { realmId, username, password, keepOfflineSessions: Boolean(o.keepOfflineSessions), temporary: Boolean(o.temporary) })));
      process.stdout.write(
        `password of ${r.username} changed${o.temporary ? ' (temporary: a new one is asked for at the next sign-in)' : ''}; signed out of ${r.sessionsEnded} browser session(s), ${r.chainsRevoked} refresh token chain(s) revoked${o.keepOfflineSessions ? ' (offline ones kept)' : ''}\n`,
      );
    });
  user
    .command('list <realm>')
    .description("list a realm's users: username, email, state (enabled or disabled, then ,otp when the user has an authenticator app, ,webauthn a security key, ,passkey a passkey, ,no-password no password) and, when the user has any, the attributes as one line of JSON")
    .option('--search <text>', 'only users whose username or email contains this text')
    .option('--first <n>', 'skip this many users', intArg('--first'))
    .option('--max <n>', 'list at most this many users (default 100)', intArg('--max'))
    .action(async (realmId: string, o: { search?: string; first?: number; max?: number }) => {
      const { users, otp, keys } = await withStore(
        async (store) => {
          const users = await listUsers(store, { realmId, search: o.search, first: o.first, max: o.max });
          const ids = users.map((u) => u.id);
          return { users, otp: await usersWithOtp(store, ids), keys: await store.userAdmin.withWebAuthn(ids) };
        },
        { access: 'read' },
      );
      for (const u of users) {
        const attributes = Object.keys(u.attributes).length > 0 ? `\t${terminalJson(u.attributes)}` : '';
        const k = keys.get(u.id);
        const marks = [otp.has(u.id) && 'otp', k?.key && 'webauthn', k?.passkey && 'passkey', !hasPassword(u.passwordHash) && 'no-password'].filter((m): m is string => typeof m === 'string');
        process.stdout.write(`${u.username}\t${u.email ?? ''}\t${[u.enabled ? 'enabled' : 'disabled', ...marks].join(',')}${attributes}\n`);
      }
    });
  registerUserLifecycle(user);
  registerUserOtp(user);
  registerUserWebAuthn(user);
  registerUserFederatedIdentity(user);
  registerUserActionsEmail(user);
  registerUserGroups(user);
}
