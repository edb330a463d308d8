// cli/ldap.ts's PostgreSQL half: one database per file keeps each file short (test/helpers/db.ts, onlyDialect).
import { onlyDialect } from '../helpers/db.js';

// Without TEST_DATABASE_URL nothing of it is loaded: no test, and the file ends at once.
if (onlyDialect('postgres')) await import('./ldap.js');
