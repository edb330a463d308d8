import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bearerChallenge, errorBody, insufficientScope, invalidToken, noToken } from './errors.js';

// RFC 6750 3: auth-param values are quoted-strings without '"' or '\' and printable ASCII only.
const PARAM = /^[a-z_]+="[\x20\x21\x23-\x5B\x5D-\x7E]*"$/;

test('a challenge is well-formed whatever the description and realm', () => {
  fc.assert(
    fc.property(fc.string(), fc.string(), fc.string(), (description, realm, scope) => {
      const value = bearerChallenge(insufficientScope(description, scope), realm || undefined);
      assert.ok(value.startsWith('Bearer '));
      // Splitting on ", " is safe only because no value can hold a quote.
      for (const param of value.slice('Bearer '.length).split(/, (?=[a-z_]+=")/)) assert.match(param, PARAM);
    }),
  );
});

test('no token: a bare challenge and an empty body (RFC 6750 3.1)', () => {
  assert.equal(bearerChallenge(noToken()), 'Bearer');
  assert.equal(bearerChallenge(noToken(), 'api'), 'Bearer realm="api"');
  assert.deepEqual(errorBody(noToken()), {});
  assert.deepEqual(errorBody(invalidToken('expired')), { error: 'invalid_token', error_description: 'expired' });
});
