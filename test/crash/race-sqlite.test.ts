import { raceSuite } from './race.js';

raceSuite('sqlite');
