/**
 * What a door (the CLI, src/cli/run.ts) needs to tell apart when an operation fails: a refusal of the
 * command (a bad database URL, a conflict, something not found) from a database that is busy or cannot be
 * reached, which is worth retrying. The doors call the operations layer and take these from here, not
 * from storage/.
 */
export { DatabaseUrlError } from '../storage/database.js';
export { isDatabaseBusy, isDatabaseUnreachable } from '../storage/dialects/errors.js';
export { ConflictError, NotFoundError } from '../storage/types.js';
