import { fuzzSuite } from './authorize-flow.js';

fuzzSuite('sqlite', 'authorize');
