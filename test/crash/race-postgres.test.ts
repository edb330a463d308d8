import { dialects } from '../helpers/db.js';
import { raceSuite } from './race.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test.
if (dialects().includes('postgres')) raceSuite('postgres');
