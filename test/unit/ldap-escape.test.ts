import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeDnValue, escapeFilterValue, isAttributeName } from '../../src/oauth/ldap/escape.js';
import { userFilter } from '../../src/oauth/ldap/directory.js';

test('RFC 4515 3: *, (, ), \\ and NUL become \\XX in a filter value; the rest stays', () => {
  assert.equal(escapeFilterValue('*'), '\\2a');
  assert.equal(escapeFilterValue('alice)(uid=*'), 'alice\\29\\28uid=\\2a');
  assert.equal(escapeFilterValue('a\\b'), 'a\\5cb');
  assert.equal(escapeFilterValue('a\u0000b'), 'a\\00b');
  assert.equal(escapeFilterValue('jürgen@example.org'), 'jürgen@example.org');
});

test('a filter holds what was typed as one value of one assertion', () => {
  const f = userFilter({ objectClasses: ['inetOrgPerson', 'organizationalPerson'], usernameAttribute: 'uid', customFilter: undefined }, { value: '*)(|(uid=*', byEmail: false });
  assert.equal(f, '(&(objectClass=inetOrgPerson)(objectClass=organizationalPerson)(uid=\\2a\\29\\28|\\28uid=\\2a))');
  assert.equal(userFilter({ objectClasses: ['person'], usernameAttribute: 'uid', customFilter: '(!(nsAccountLock=TRUE))' }, { value: 'a@b', byEmail: true }), '(&(objectClass=person)(mail=a@b)(!(nsAccountLock=TRUE)))');
});

test('RFC 4514 2.4: special characters of a DN value are escaped', () => {
  assert.equal(escapeDnValue('Smith, John'), 'Smith\\, John');
  assert.equal(escapeDnValue('a+b=c;d<e>f"g\\h'), 'a\\+b\\=c\\;d\\<e\\>f\\"g\\\\h');
  assert.equal(escapeDnValue(' #lead'), '\\ #lead');
  assert.equal(escapeDnValue('#x '), '\\#x\\ ');
  assert.equal(escapeDnValue('n\u0000l'), 'n\\00l');
});

test('configured attribute names are names, never filter syntax', () => {
  assert.ok(isAttributeName('uid'));
  assert.ok(isAttributeName('sAMAccountName'));
  assert.ok(isAttributeName('2.5.4.3'));
  assert.ok(!isAttributeName('uid)(cn=*'));
  assert.ok(!isAttributeName(''));
});
