import { dialects } from '../helpers/db.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test; without it nothing of it is loaded.
if (dialects().includes('postgres')) (await import('./desktop-client.js')).desktopClientSuite('postgres', 'device');
