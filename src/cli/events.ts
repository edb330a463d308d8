import type { Command } from 'commander';
import { CliError, intArg, withStore } from './common.js';

export function registerEvents(program: Command): void {
  program
    .command('events <realm>')
    .description('list audit events, newest first: logins, consents, codes, refreshes, reuse, revocations')
    .option('--user <username>', "only this user's events")
    .option('--client <client-id>', "only this client's events")
    .option('--since <time>', 'only events at or after this ISO 8601 time or epoch second')
    .option('--limit <n>', 'at most this many events (default 100)', intArg('limit'))
    .option('--json', 'one JSON object per line')
    .action(async (realmId: string, o: { user?: string; client?: string; since?: string; limit?: number; json?: boolean }) => {
      let since: number | undefined;
      if (o.since !== undefined) {
        since = /^\d+$/.test(o.since) ? Number(o.since) : Math.floor(Date.parse(o.since) / 1000);
        if (!Number.isFinite(since)) throw new CliError(`--since: ${o.since} is not a time`);
      }
      const events = await withStore(async (store) => {
        if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
        const user = o.user !== undefined ? await store.users.findByUsername(realmId, o.user.toLowerCase()) : undefined;
        return store.events.list(realmId, {
          ...(o.user !== undefined ? { username: o.user.toLowerCase(), ...(user ? { userId: user.id } : {}) } : {}),
          ...(o.client !== undefined ? { clientId: o.client } : {}),
          ...(since !== undefined ? { since } : {}),
          limit: Math.min(o.limit ?? 100, 10_000),
        });
      });
      for (const e of events) {
        if (o.json) process.stdout.write(JSON.stringify({ ...e, time: new Date(e.time * 1000).toISOString() }) + '\n');
        else process.stdout.write([new Date(e.time * 1000).toISOString(), e.type, e.outcome, e.clientId ?? '-', e.username ?? e.userId ?? '-', e.ip ?? '-', e.reason ?? ''].join('\t') + '\n');
      }
    });
}
