import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeUserAgent, deviceLine } from '../../src/views/user-agent.js';

// Real User-Agent strings of current browsers (as they send them), and what a session's device says.
const CASES: Array<[string, ReturnType<typeof describeUserAgent>, string | undefined]> = [
  ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', { browser: 'Firefox/128.0', os: 'Linux', osVersion: 'Unknown', device: 'Other', mobile: false }, 'Firefox 128 (Linux)'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.109 Safari/537.36', { browser: 'Chrome/120.0.6099', os: 'Windows', osVersion: '10', device: 'Other', mobile: false }, 'Chrome 120 (Windows 10)'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91', { browser: 'Edge/120.0.2210', os: 'Windows', osVersion: '10', device: 'Other', mobile: false }, 'Edge 120 (Windows 10)'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15', { browser: 'Safari/17.2', os: 'Mac OS X', osVersion: '10.15.7', device: 'Other', mobile: false }, 'Safari 17 (Mac OS X 10.15.7)'],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1', { browser: 'Safari/17.1.2', os: 'iOS', osVersion: '17.1.2', device: 'iPhone', mobile: true }, 'Safari 17 (iOS 17.1.2)'],
  ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36', { browser: 'Chrome/120.0.6099', os: 'Android', osVersion: '14', device: 'Mobile', mobile: true }, 'Chrome 120 (Android 14)'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', { browser: 'Chrome/131.0.0', os: 'Linux', osVersion: 'Unknown', device: 'Other', mobile: false }, 'Chrome 131 (Linux)'],
  ['curl/8.5.0', { browser: 'curl/8.5.0', os: 'Other', osVersion: 'Unknown', device: 'Other', mobile: false }, 'curl 8'],
  ['python-requests/2.31.0', { browser: 'Other', os: 'Other', osVersion: 'Unknown', device: 'Other', mobile: false }, undefined],
];

test('a User-Agent read as Keycloak shows a device: browser name/version, system and version, phone or not', () => {
  for (const [ua, expected, line] of CASES) {
    assert.deepEqual(describeUserAgent(ua), expected, ua);
    assert.equal(deviceLine(ua), line, ua);
  }
  assert.deepEqual(describeUserAgent(undefined), { browser: 'Other', os: 'Other', osVersion: 'Unknown', device: 'Other', mobile: false });
  assert.equal(deviceLine(undefined), undefined);
});
