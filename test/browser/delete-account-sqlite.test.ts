// browser/delete-account.ts's SQLite half: one database per file keeps each file short (test/helpers/db.ts, onlyDialect).
import { onlyDialect } from '../helpers/db.js';

onlyDialect('sqlite');
await import('./delete-account.js');
