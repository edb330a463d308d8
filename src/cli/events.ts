import type { Command } from 'commander';
import { CliError, collect, intArg, timeArg, withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { EVENT_TYPES, listLoginEvents, userEventFilter, type StoredEvent } from '../admin/operations/events.js';

const COLUMNS = ['time', 'type', 'outcome', 'client', 'username', 'user id', 'ip', 'reason'];

/**
 * The event's time with milliseconds: ids start with the millisecond they were made at (sortableId),
 * used when it falls in the recorded second (a server whose clock is not the system's has only seconds).
 */
function eventTime(e: StoredEvent): string {
  const ms = parseInt(e.id.slice(0, 9), 36);
  return new Date(Number.isFinite(ms) && Math.floor(ms / 1000) === e.time ? ms : e.time * 1000).toISOString();
}

function textLine(e: StoredEvent): string {
  const fields = [eventTime(e), e.type, e.outcome, e.clientId ?? '-', e.username ?? '-', e.userId ?? '-', e.ip ?? '-', e.reason ?? ''];
  return fields.map((f) => terminalSafe(f)).join('\t');
}

export function registerEvents(program: Command): void {
  program
    .command('events <realm>')
    .description('list audit events, newest first (a header line, then one tab-separated line per event; control characters in any field are shown escaped): logins, consents, codes, refreshes, reuse, revocations')
    .option('--user <username>', "only this user's events")
    .option('--client <client-id>', "only this client's events")
    .option('--type <type>', 'only events of this type (repeatable: any of them), e.g. LOGIN_ERROR, REFRESH_TOKEN_ERROR, TOKEN_REUSE', collect)
    .option('--ip <address>', 'only events from this client address')
    .option('--since <time>', 'only events at or after this ISO 8601 time or epoch second', timeArg('--since'))
    .option('--until <time>', 'only events at or before this ISO 8601 time or epoch second', timeArg('--until'))
    .option('--limit <n>', 'at most this many events (default 100)', intArg('limit'))
    .option('--json', 'one JSON object per line')
    .action(async (realmId: string, o: { user?: string; client?: string; type?: string[]; ip?: string; since?: number; until?: number; limit?: number; json?: boolean }) => {
      const { since, until } = o;
      const unknown = o.type?.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
      if (unknown !== undefined) throw new CliError(`unknown event type ${unknown}: one of ${EVENT_TYPES.join(', ')}`);
      const events = await withStore(async (store) => {
        const filter = {
          ...(o.user !== undefined ? await userEventFilter(store, realmId, o.user) : {}),
          ...(o.client !== undefined ? { clientId: o.client } : {}),
          ...(o.type !== undefined ? { types: o.type } : {}),
          ...(o.ip !== undefined ? { ip: o.ip } : {}),
          ...(since !== undefined ? { since } : {}),
          ...(until !== undefined ? { until } : {}),
          limit: Math.min(o.limit ?? 100, 10_000),
        };
        return listLoginEvents(store, { realmId, checkRealm: true, filter });
      }, { access: 'read' });
      // JSON escapes every control character itself, so --json keeps the exact stored text.
      if (!o.json) process.stdout.write(COLUMNS.join('\t') + '\n');
      for (const e of events) process.stdout.write((o.json ? JSON.stringify({ ...e, time: eventTime(e) }) : textLine(e)) + '\n');
    });
}
