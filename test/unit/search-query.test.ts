import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSearchQuery, userSearchFilters } from '../../src/admin/keycloak/search-query.js';
import { ValidationError } from '../../src/admin/validation.js';

const parsed = (q: string): Record<string, string> => Object.fromEntries(parseSearchQuery(q));

test("Keycloak's q syntax: key:value pairs, quoted parts with \\\" escapes, words without a colon ignored", () => {
  assert.deepEqual(parsed('   key1:val1 nokey key2:"val 2" key3:val3   '), { key1: 'val1', key2: 'val 2', key3: 'val3' });
  assert.deepEqual(parsed('key1:"val1"'), { key1: 'val1' });
  // An unquoted value keeps its quotes; an unquoted key too.
  assert.deepEqual(parsed('key1:val="123456"'), { key1: 'val="123456"' });
  assert.deepEqual(parsed('key"1":val1'), { 'key"1"': 'val1' });
  assert.deepEqual(parsed('key1:"val=\\"12 34 56\\""'), { key1: 'val="12 34 56"' });
  assert.deepEqual(parsed('"key \\"1\\"":"val \\"1\\""'), { 'key "1"': 'val "1"' });
  assert.deepEqual(parsed('k:v k:w'), { k: 'w' }, 'the last value of a key given twice');
  assert.deepEqual(parsed('"only quoted" plain'), {});
});

test('q is refused when a quote is not closed or it has too many pairs', () => {
  assert.throws(() => parseSearchQuery('a:"open'), (e: Error) => e instanceof ValidationError && /quote/.test(e.message));
  assert.throws(() => parseSearchQuery(Array.from({ length: 21 }, (_, i) => `k${i}:v`).join(' ')), ValidationError);
});

test('root properties in q filter their field; other keys are attributes', () => {
  assert.deepEqual(userSearchFilters('email:a@example.com dept:sales firstName:Ann'), { email: 'a@example.com', firstName: 'Ann', attributes: [['dept', 'sales']] });
  assert.deepEqual(userSearchFilters(undefined), {});
});
