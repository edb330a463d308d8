// cli/composite-roles.ts's PostgreSQL half (runs only with TEST_DATABASE_URL; test/helpers/db.ts, onlyDialect).
import { onlyDialect } from '../helpers/db.js';

onlyDialect('postgres');
await import('./composite-roles.js');
