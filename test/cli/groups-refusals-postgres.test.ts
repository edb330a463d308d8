import { dialects } from '../helpers/db.js';
import { groupSuites } from './groups.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test.
if (dialects().includes('postgres')) groupSuites('postgres', 'refusals');
