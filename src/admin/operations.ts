/**
 * Administrative operations: the only code that validates and performs an admin change. The CLI, the
 * admin REST API, the console and the importer call these (one file per resource under operations/).
 */
export * from './operations/realms.js';
export * from './operations/organizations.js';
export * from './operations/users.js';
export * from './operations/clients.js';
export * from './operations/keys.js';
export * from './operations/tokens.js';
export * from './operations/client-scopes.js';
export * from './operations/roles.js';
export * from './operations/groups.js';
export * from './operations/bootstrap.js';
