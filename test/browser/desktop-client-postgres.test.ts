import { dialects } from '../helpers/db.js';
import { desktopClientSuite } from './desktop-client.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test.
if (dialects().includes('postgres')) desktopClientSuite('postgres', 'paste');
