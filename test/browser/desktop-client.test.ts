import { desktopClientCommonTests, desktopClientSuite } from './desktop-client.js';

// test/browser/desktop-client.ts: the example desktop client against a listening server and a real browser.
desktopClientSuite('sqlite', 'paste');
desktopClientCommonTests();
