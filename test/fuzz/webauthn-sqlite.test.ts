import { webauthnFuzzSuite } from './webauthn.js';

webauthnFuzzSuite('sqlite');
