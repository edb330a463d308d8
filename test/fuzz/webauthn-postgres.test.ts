import { dialects } from '../helpers/db.js';
import { webauthnFuzzSuite } from './webauthn.js';

// With TEST_DATABASE_URL only, as every PostgreSQL test.
if (dialects().includes('postgres')) webauthnFuzzSuite('postgres');
