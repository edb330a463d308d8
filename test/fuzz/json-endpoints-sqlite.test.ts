import { fuzzSuite } from './json-endpoints.js';

fuzzSuite('sqlite', 'token');
