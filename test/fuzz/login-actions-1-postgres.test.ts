import { dialects } from '../helpers/db.js';
import { fuzzSuite } from './authorize-flow.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test.
if (dialects().includes('postgres')) fuzzSuite('postgres', 'login-actions-1');
