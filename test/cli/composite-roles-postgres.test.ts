// cli/composite-roles.ts's PostgreSQL half (runs only with TEST_DATABASE_URL; test/helpers/db.ts, onlyDialect).
import { onlyDialect } from '../helpers/db.js';

// Without TEST_DATABASE_URL nothing of it is loaded: no test, and the file ends at once.
if (onlyDialect('postgres')) await import('./composite-roles.js');
