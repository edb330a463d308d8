import { fuzzSuite } from './admin-routes.js';

fuzzSuite('sqlite');
