// The command line's commands (one file per command group under src/cli/, all calling src/admin/operations)
// and how a command's failure is reported. src/cli.ts runs it as the realmgate process; the tests run it
// in a worker thread too (test/helpers/cli-worker.ts), one command after another.
import cluster from 'node:cluster';
import { CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
import { SETTINGS } from '../config/defaults.js';
import { ConflictError, DatabaseUrlError, NotFoundError, isDatabaseBusy, isDatabaseUnreachable } from '../admin/failures.js';
import { ValidationError } from '../admin/validation.js';
import { CliError, program } from './common.js';
import { registerStart } from './start.js';
import { registerRealm } from './realm.js';
import { registerKeys } from './keys.js';
import { registerEvents } from './events.js';
import { registerOrg } from './org.js';
import { registerUser } from './user.js';
import { registerClient } from './client.js';
import { registerToken } from './token.js';
import { registerBootstrap } from './bootstrap.js';
import { registerAdminEvents } from './admin-events.js';
import { registerBackup } from './backup.js';
import { registerRole } from './role.js';
import { registerGroup } from './group.js';
import { registerScope } from './mapper.js';
import { registerIdentityProvider } from './identity-provider.js';
import { registerLdap } from './ldap.js';
import { terminalSafe } from './terminal-text.js';

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

/**
 * Runs one command line (`argv` as process.argv: the node binary and the script first). Resolves to
 * undefined when the command succeeded (its process exits once nothing is left to do, with any
 * process.exitCode a command set), or to the exit status of a refusal, whose one line it has written on
 * stderr: 1 refused, 75 (sysexits.h EX_TEMPFAIL) the database is busy or cannot be reached.
 */
export async function runCli(argv: string[]): Promise<number | undefined> {
  try {
    await program.parseAsync(argv);
    return undefined;
  } catch (err) {
    // Thrown only where commander was told not to end the process itself (test/helpers/cli-worker.ts):
    // it has written its message already.
    if (err instanceof CommanderError) return err.exitCode === 0 ? undefined : err.exitCode;
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
    if (cluster.isWorker) await (await import('../cluster.js')).workerFailed(line ?? '');
    else process.stderr.write(`realmgate: ${line}\n`);
    return busy ? 75 : 1;
  }
}

function busyLine(msg: string): string {
  const waited = process.env[SETTINGS.dbWaitTimeoutMs.env] || SETTINGS.dbWaitTimeoutMs.default;
  return `the database is busy (${msg.split('\n')[0]}): another process or transaction holds what this command needs, and it waited REALMGATE_DB_WAIT_TIMEOUT_MS (${waited} ms); try again`;
}

function unreachableLine(msg: string): string {
  return `cannot reach the database (${msg.split('\n')[0]}): check that it is running and that DATABASE_URL names it; try again`;
}

