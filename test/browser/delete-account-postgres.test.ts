// browser/delete-account.ts's PostgreSQL half: one database per file keeps each file short (test/helpers/db.ts, onlyDialect).
import { onlyDialect } from '../helpers/db.js';

onlyDialect('postgres');
await import('./delete-account.js');
