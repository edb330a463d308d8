import { sigkillSuite } from './sigkill.js';

sigkillSuite('sqlite');
