import { fuzzSuite } from './browser-pages.js';

fuzzSuite('sqlite');
