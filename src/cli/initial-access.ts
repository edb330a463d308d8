import type { Command } from 'commander';
import { intArg, withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { cliActor } from '../admin/operations/common.js';
import { createInitialAccess, deleteInitialAccess, listInitialAccess, MAX_INITIAL_ACCESS_COUNT, MAX_INITIAL_ACCESS_EXPIRATION } from '../admin/operations/initial-access.js';
import type { InitialAccess } from '../storage/repos/client-registration.js';

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function expiry(a: InitialAccess): string {
  return a.expiresAt === 0 ? 'never' : isoTime(a.expiresAt);
}

/**
 * `client initial-access ...`: Keycloak's client initial access tokens, which let their bearer register
 * clients at the realm's dynamic client registration endpoint (RFC 7591), up to a count, until they expire.
 */
export function registerInitialAccessCommands(client: Command): void {
  const cmd = client
    .command('initial-access')
    .description("initial access tokens: each lets its bearer register up to a number of clients at the realm's client registration endpoint (RFC 7591) until it expires (Keycloak's clients-initial-access)");
  cmd
    .command('create <realm>')
    .description('make an initial access token and print it once (only its hash is stored), with its id, expiry and count')
    .option('--expiration <seconds>', 'seconds until it expires; 0 (the default): never', intArg('--expiration', { min: 0, max: MAX_INITIAL_ACCESS_EXPIRATION }))
    .option('--count <n>', 'how many clients it may register (default 1)', intArg('--count', { min: 1, max: MAX_INITIAL_ACCESS_COUNT }))
    .action(async (realmId: string, o: { expiration?: number; count?: number }) => {
      const { access, token } = await withStore((store) =>
        createInitialAccess(store, { realmId, ...(o.expiration !== undefined ? { expiration: o.expiration } : {}), ...(o.count !== undefined ? { count: o.count } : {}) }, cliActor()),
      );
      process.stdout.write(
        `created initial access token ${access.id} in realm ${terminalSafe(realmId)}\n` +
          `expires: ${expiry(access)}\n` +
          `registers up to ${access.count} client${access.count === 1 ? '' : 's'}\n` +
          `initial access token (shown only now): ${token}\n`,
      );
    });
  cmd
    .command('list <realm>')
    .description('list the initial access tokens that may still register a client (not expired, not used up), newest first: id, created, expires (or never), count, remaining')
    .action(async (realmId: string) => {
      const list = await withStore((store) => listInitialAccess(store, realmId), { access: 'read' });
      for (const a of list) process.stdout.write(`${a.id}\t${isoTime(a.createdAt)}\t${expiry(a)}\t${a.count}\t${a.remaining}\n`);
    });
  cmd
    .command('delete <realm> <id>')
    .description('delete an initial access token: it registers no more clients (those it registered stay)')
    .action(async (realmId: string, id: string) => {
      await withStore((store) => deleteInitialAccess(store, { realmId, id }, cliActor()));
      process.stdout.write(`deleted initial access token ${terminalSafe(id)} from realm ${terminalSafe(realmId)}\n`);
    });
}
