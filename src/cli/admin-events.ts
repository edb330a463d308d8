import type { Command } from 'commander';
import { intArg, withStore } from './common.js';
import { listAdminEvents } from '../admin/operations/events.js';

/** `realmgate admin-events <realm>`: who changed what, when and from where (the admin API's admin-events). */
export function registerAdminEvents(program: Command): void {
  program
    .command('admin-events <realm>')
    .description('list admin changes of a realm, newest first: time (ms), operation, resource, who (realm/user, client), from where, through which door')
    .option('--limit <n>', 'at most this many events (default 100)', intArg('limit'))
    .option('--json', 'one JSON object per line')
    .action(async (realmId: string, o: { limit?: number; json?: boolean }) => {
      const events = await withStore(async (store) => {
        return listAdminEvents(store, { realmId, checkRealm: true, filter: { max: Math.min(o.limit ?? 100, 10_000) } });
      }, { access: 'read' });
      for (const e of events) {
        const time = new Date(e.timeMs).toISOString();
        if (o.json) {
          process.stdout.write(JSON.stringify({ ...e, time }) + '\n');
          continue;
        }
        const who = e.via === 'cli' ? `cli:${e.authUsername ?? '-'}` : `${e.authRealmId ?? '-'}/${e.authUsername ?? e.authUserId ?? '-'}`;
        process.stdout.write([time, e.operation, e.resourceType, e.resourcePath || '-', who, e.authClientId ?? '-', e.ip ?? '-', e.via].join('\t') + '\n');
      }
    });
}
