import { dialects } from '../helpers/db.js';
import { sigkillSuite } from './sigkill.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test.
if (dialects().includes('postgres')) sigkillSuite('postgres');
