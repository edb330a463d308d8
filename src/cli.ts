#!/usr/bin/env node
// The command line: one file per command group under src/cli/, all calling src/admin/operations.
import cluster from 'node:cluster';
import { ConfigError } from './config/config.js';
import { SETTINGS } from './config/defaults.js';
import { DatabaseUrlError } from './storage/database.js';
import { isDatabaseBusy, isDatabaseUnreachable } from './storage/dialects/errors.js';
import { ConflictError, NotFoundError } from './storage/types.js';
import { ValidationError } from './admin/validation.js';
import { CliError, program } from './cli/common.js';
import { registerStart } from './cli/start.js';
import { registerRealm } from './cli/realm.js';
import { registerKeys } from './cli/keys.js';
import { registerEvents } from './cli/events.js';
import { registerOrg } from './cli/org.js';
import { registerUser } from './cli/user.js';
import { registerClient } from './cli/client.js';
import { registerToken } from './cli/token.js';
import { registerBootstrap } from './cli/bootstrap.js';
import { registerAdminEvents } from './cli/admin-events.js';
import { registerBackup } from './cli/backup.js';
import { registerRole } from './cli/role.js';
import { registerGroup } from './cli/group.js';
import { registerScope } from './cli/mapper.js';
import { registerIdentityProvider } from './cli/identity-provider.js';
import { registerLdap } from './cli/ldap.js';
import { terminalSafe } from './cli/terminal-text.js';

// A reader of this process's output that went away (a log shipper restarted, `| head`, a closed
// terminal): the server keeps serving and a command finishes, their lines dropped. Unhandled, the EPIPE
// ended the server, or froze it at exit while pino retried its buffered lines for ever.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

registerStart(program);
registerRealm(program);
registerKeys(program);
registerEvents(program);
registerOrg(program);
registerUser(program);
registerClient(program);
registerToken(program);
registerBootstrap(program);
registerAdminEvents(program);
registerRole(program);
registerGroup(program);
registerScope(program);
registerIdentityProvider(program);
registerLdap(program);
registerBackup(program);

// Tells dist/realmgate.mjs (scripts/bundle-loader.mjs) whether this process is a server: it holds V8 to
// a server's start-up settings until it listens, and gives any other command V8's defaults at once. Read
// from the command line it got it wrong when a global option came first (`--database-url U start`: such
// a server idled 12 MB higher).
program.hook('preAction', (_program, action) => {
  (process as NodeJS.EventEmitter).emit('realmgate:command', action.parent === program && action.name() === 'start');
});

async function main(): Promise<void> {
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    const known = err instanceof CliError || err instanceof ValidationError || err instanceof ConflictError || err instanceof NotFoundError || err instanceof ConfigError || err instanceof DatabaseUrlError;
    const msg = err instanceof Error ? err.message : String(err);
    const unreachable = !known && isDatabaseUnreachable(err);
    const busy = unreachable || isDatabaseBusy(err);
    // The driver's words alone ("canceling statement due to lock timeout", "database is locked", "connect
    // ECONNREFUSED") do not say that nothing is wrong with the command, or what to do: retry. Exit status
    // 75 (sysexits.h EX_TEMPFAIL) lets a script tell a busy or unreachable database from a refused command.
    // A refusal may quote what was typed (a group path, a username): control characters in it are shown
    // escaped, so that it stays one line and cannot drive the terminal.
    const line = unreachable ? unreachableLine(msg) : busy ? busyLine(msg) : known ? terminalSafe(msg) : msg.split('\n')[0];
    // A worker of `start --workers N` tells the primary, which prints it once for all workers and stops.
    if (cluster.isWorker) await (await import('./cluster.js')).workerFailed(line ?? '');
    else process.stderr.write(`realmgate: ${line}\n`);
    process.exit(busy ? 75 : 1);
  }
}

function busyLine(msg: string): string {
  const waited = process.env[SETTINGS.dbWaitTimeoutMs.env] || SETTINGS.dbWaitTimeoutMs.default;
  return `the database is busy (${msg.split('\n')[0]}): another process or transaction holds what this command needs, and it waited REALMGATE_DB_WAIT_TIMEOUT_MS (${waited} ms); try again`;
}

function unreachableLine(msg: string): string {
  return `cannot reach the database (${msg.split('\n')[0]}): check that it is running and that DATABASE_URL names it; try again`;
}

void main();
