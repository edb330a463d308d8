import { desktopClientSuite } from './desktop-client.js';

// test/browser/desktop-client.ts's device flow and refusals, on SQLite.
desktopClientSuite('sqlite', 'device');
