import type { Command } from 'commander';
import { CliError, withStore } from './common.js';
import { terminalJson, terminalSafe } from './terminal-text.js';
import { coseAlgorithmName } from '../crypto/cose-key.js';
import { findUserWebAuthn, removeUserWebAuthn, userCredentials, type WebAuthnSummary } from '../admin/operations/user-credentials.js';
import { requireUser } from '../admin/operations/users.js';

function time(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

const alg = (c: WebAuthnSummary): string => coseAlgorithmName(c.alg) ?? String(c.alg);

/** `user webauthn list|remove`: a user's security keys (WebAuthn, Keycloak's webauthn credentials). */
export function registerUserWebAuthn(user: Command): void {
  const webauthn = user.command('webauthn').description("list or remove a user's security keys (WebAuthn: a second step at sign-in)");
  webauthn
    .command('list <realm> <user>')
    .description("list a user's security keys and passkeys (by username or id): id, label, added, algorithm, AAGUID, signature counter, transports (--json: passwordless true for a passkey)")
    .option('--json', 'one JSON object per line (credentialId base64url, publicKey the COSE key in base64)')
    .action(async (realmId: string, ref: string, o: { json?: boolean }) => {
      const { webauthn: list } = await withStore((store) => userCredentials(store, { realmId, user: ref }), { access: 'read' });
      for (const c of list) {
        if (o.json) process.stdout.write(`${terminalJson({ id: c.id, label: c.label, created: time(c.createdAt), passwordless: c.passwordless, algorithm: alg(c), aaguid: c.aaguid, counter: c.signCount, attestationFormat: c.attestationFormat, transports: c.transports, credentialId: c.credentialId, publicKey: c.publicKey })}\n`);
        else process.stdout.write(`${c.id}\t${terminalSafe(c.label ?? '')}\t${time(c.createdAt)}\t${alg(c)}\t${c.aaguid}\t${c.signCount}\t${c.transports.join(',')}\n`);
      }
    });
  webauthn
    .command('remove <realm> <user> [id-or-label]')
    .description('remove one security key of a user (by its id, or its label when no other has it), or every one with --all; the user signs in without it (add --require-webauthn-setup on with user update to have a new one registered)')
    .option('--all', "remove all of the user's security keys")
    .action(async (realmId: string, ref: string, credential: string | undefined, o: { all?: boolean }) => {
      if (o.all && credential !== undefined) throw new CliError('give either a security key (id or label) or --all, not both');
      if (!o.all && credential === undefined) throw new CliError('name the security key to remove (its id or label; see user webauthn list) or use --all');
      const removed = await withStore(async (store) => {
        const u = await requireUser(store, realmId, ref);
        const keys = o.all ? (await userCredentials(store, { realmId, user: u.id })).webauthn : [await findUserWebAuthn(store, { realmId, user: u.id, ref: credential! })];
        for (const k of keys) await removeUserWebAuthn(store, u, k);
        return keys;
      });
      for (const c of removed) process.stdout.write(`removed security key ${c.id}${c.label !== null ? ` (${terminalSafe(c.label)})` : ''}\n`);
      if (removed.length === 0) process.stdout.write(`${terminalSafe(ref)} has no security key\n`);
    });
}
