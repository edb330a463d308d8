import { Option, type Command } from 'commander';
import { CliError, withStore } from './common.js';
import { rotateKeys } from '../admin/operations.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description("manage a realm's signing keys");
  keys
    .command('rotate <realm>')
    .description('add a new active signing key; the previous one stays in the JWKS until its tokens have expired')
    .addOption(new Option('--alg <alg>', "algorithm of the new key (default: the realm's); another one becomes the realm's signing algorithm").choices(['RS256', 'ES256', 'EdDSA']))
    .action(async (realmId: string, o: { alg?: string }) => {
      const k = await withStore((store) => rotateKeys(store, { realmId, ...(o.alg ? { alg: o.alg } : {}) }), { keys: true });
      process.stdout.write(`new active key ${k.kid} (${k.alg}) in realm ${realmId}\n`);
    });
  keys
    .command('list <realm>')
    .description("list a realm's signing keys")
    .action(async (realmId: string) => {
      const list = await withStore(async (store) => {
        const r = await store.realms.get(realmId);
        if (!r) throw new CliError(`realm ${realmId} does not exist`);
        return { realm: r, keys: await store.keys.list(realmId) };
      }, { access: 'read' });
      const now = Math.floor(Date.now() / 1000);
      for (const k of list.keys) {
        const until = k.retiredAt != null ? k.retiredAt + list.realm.accessTokenLifetime : undefined;
        const state = k.status === 'active' ? 'active' : until !== undefined && until > now ? `retired, published until ${new Date(until * 1000).toISOString()}` : 'retired, unpublished';
        process.stdout.write(`${k.kid}\t${k.alg}\t${new Date(k.createdAt * 1000).toISOString()}\t${state}\n`);
      }
    });
}
