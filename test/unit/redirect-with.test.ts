import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redirectWith } from '../../src/oauth/authorize/checks.js';

test('redirectWith keeps the registered query and encodes every value', () => {
  assert.equal(redirectWith('https://rp.example/cb?x=1', { code: 'a b', state: 's&t' }), 'https://rp.example/cb?x=1&code=a%20b&state=s%26t');
  assert.equal(redirectWith('https://rp.example/cb', {}), 'https://rp.example/cb');
});

test('redirectWith never throws on an unpaired surrogate: it goes back as U+FFFD', () => {
  // encodeURIComponent('\ud800') throws URIError; a 500 would follow.
  assert.equal(redirectWith('https://rp.example/cb', { state: 'a\ud800b' }), 'https://rp.example/cb?state=a%EF%BF%BDb');
  assert.equal(redirectWith('https://rp.example/cb', { state: '\udfff' }), 'https://rp.example/cb?state=%EF%BF%BD');
  // A well-formed pair is one character, kept as it is.
  assert.equal(redirectWith('https://rp.example/cb', { state: '😀' }), 'https://rp.example/cb?state=%F0%9F%98%80');
});
