import { groupSuites } from './groups.js';

groupSuites('sqlite', 'refusals');
