import type { Command } from 'commander';
import { CliError, withStore } from './common.js';
import { terminalJson, terminalSafe } from './terminal-text.js';
import { findUserOtp, removeAllUserOtp, removeUserCredential, userCredentials, type OtpSummary } from '../admin/operations/user-credentials.js';

function time(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

const settings = (c: OtpSummary): string => `${c.algorithm}/${c.digits}/${c.period}s`;

/** `user otp list|remove`: a user's authenticator apps (TOTP, Keycloak's otp credentials). */
export function registerUserOtp(user: Command): void {
  const otp = user.command('otp').description("list or remove a user's authenticator apps (TOTP one-time codes at sign-in)");
  otp
    .command('list <realm> <user>')
    .description("list a user's authenticators (by username or id): id, label, created, algorithm/digits/period; never their keys")
    .option('--json', 'one JSON object per line')
    .action(async (realmId: string, ref: string, o: { json?: boolean }) => {
      const { otp: list } = await withStore((store) => userCredentials(store, { realmId, user: ref }), { access: 'read' });
      for (const c of list) {
        if (o.json) process.stdout.write(`${terminalJson({ id: c.id, label: c.label, created: time(c.createdAt), algorithm: c.algorithm, digits: c.digits, period: c.period })}\n`);
        else process.stdout.write(`${c.id}\t${terminalSafe(c.label ?? '')}\t${time(c.createdAt)}\t${settings(c)}\n`);
      }
    });
  otp
    .command('remove <realm> <user> [id-or-label]')
    .description('remove one authenticator of a user (by its id, or its label when no other has it), or every one with --all; the user signs in without it (add --require-otp-setup on with user update to have a new one set up)')
    .option('--all', "remove all of the user's authenticators")
    .action(async (realmId: string, ref: string, credential: string | undefined, o: { all?: boolean }) => {
      if (o.all && credential !== undefined) throw new CliError('give either an authenticator (id or label) or --all, not both');
      if (!o.all && credential === undefined) throw new CliError('name the authenticator to remove (its id or label; see user otp list) or use --all');
      const removed = await withStore(async (store) => {
        if (o.all) return removeAllUserOtp(store, { realmId, user: ref });
        const found = await findUserOtp(store, { realmId, user: ref, ref: credential! });
        return [await removeUserCredential(store, { realmId, user: ref, credentialId: found.id })];
      });
      for (const c of removed) process.stdout.write(`removed authenticator ${c.id}${c.label !== null ? ` (${terminalSafe(c.label)})` : ''}\n`);
      if (removed.length === 0) process.stdout.write(`${terminalSafe(ref)} has no authenticator\n`);
    });
}
