import { fuzzSuite } from './surface.js';

fuzzSuite('sqlite');
