import { fuzzSuite } from './authorize-flow.js';

fuzzSuite('sqlite', 'login-actions-2');
