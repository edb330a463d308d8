import type { Store } from '../storage/store.js';
import type { SessionClient } from '../storage/repos/session-admin.js';
import { createServices } from '../services.js';
import { systemClock } from '../clock.js';
import { openKeySecret } from '../crypto/key-file.js';
import { config } from './common.js';

/**
 * Runs a change that may end sessions (user logout, disable, delete, set-password, revoke-consent) and
 * then, from this process, sends the back-channel logout tokens a server would have sent: the command
 * line changes the database without the server, which would never learn of it. Waits for the deliveries
 * (each 5 s at most); a failure is a line on stderr (and a LOGOUT failure event), never the command's.
 */
export async function tellingClients<T>(store: Store, change: (store: Store) => Promise<T>): Promise<T> {
  const ended: Array<{ realmId: string; sessions: SessionClient[] }> = [];
  store.sessionEnds = (realmId, sessions) => ended.push({ realmId, sessions });
  let result: T;
  try {
    result = await change(store);
  } finally {
    store.sessionEnds = undefined;
  }
  if (ended.length === 0) return result;
  const say = (message: string): boolean => process.stderr.write(`realmgate: ${message}\n`);
  const cfg = config();
  try {
    // Signing needs the private keys: their secret, as a server opens it.
    openKeySecret(cfg, say);
  } catch (err) {
    say(`back-channel logout not sent: ${(err as Error).message}`);
    return result;
  }
  const services = createServices(cfg, store, systemClock);
  services.backchannel.useLogger({ info: () => undefined, warn: (o: { client?: string; detail?: string }, msg: string) => say(`${msg}: client ${o.client ?? '?'}${o.detail ? ` (${o.detail})` : ''}`) });
  for (const e of ended) services.backchannel.notify(e.realmId, e.sessions);
  await services.backchannel.settled();
  const { success, failure } = services.backchannel.counts;
  if (success + failure > 0) say(`back-channel logout: ${success} client(s) told${failure > 0 ? `, ${failure} not reached` : ''}`);
  return result;
}
