import { connectionLossSuite } from './connection-loss-postgres.js';

connectionLossSuite(2);
