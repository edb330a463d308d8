import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { hashRaw } from '@node-rs/argon2';
import { exportCredential, importCredential, type KeycloakCredential } from '../../src/admin/keycloak/credentials.js';
import { hashPassword, needsRehash, verifyPassword } from '../../src/crypto/passwords.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const FIXTURE = path.resolve(repoRoot, '../shared/fixtures/keycloak/migration-realm-26.6.0.json');

/** A credential as Keycloak 26 writes it (secretData and credentialData are JSON strings). */
function credential(algorithm: string, iterations: number, salt: Buffer, value: Buffer, additionalParameters: Record<string, string[]> = {}): KeycloakCredential {
  return {
    type: 'password',
    secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: iterations, algorithm, additionalParameters }),
  };
}

async function importedHash(c: KeycloakCredential): Promise<string> {
  const r = importCredential(c);
  assert.ok('hash' in r, `not imported: ${JSON.stringify(r)}`);
  return r.hash;
}

describe('Keycloak password hashes', () => {
  const password = 'pässwörd€😀 correct';
  const cases: Array<[string, string, number, number]> = [
    ['pbkdf2', 'sha1', 20_000, 64],
    ['pbkdf2', 'sha1', 1_000, 20],
    ['pbkdf2-sha256', 'sha256', 27_500, 64],
    ['pbkdf2-sha256', 'sha256', 600, 32],
    ['pbkdf2-sha512', 'sha512', 30_000, 64],
    ['pbkdf2-sha512', 'sha512', 2_100, 128],
  ];
  for (const [algorithm, digest, iterations, keyLength] of cases) {
    test(`${algorithm}, ${iterations} iterations, ${keyLength}-byte key`, async () => {
      const salt = randomBytes(16);
      const value = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, keyLength, digest);
      const hash = await importedHash(credential(algorithm, iterations, salt, value));
      assert.ok(hash.startsWith(`$kc-${algorithm}$i=${iterations}$`));
      assert.equal(await verifyPassword(hash, password), true);
      assert.equal(await verifyPassword(hash, password + ' '), false);
      assert.equal(await verifyPassword(hash, ''), false);
      assert.equal(needsRehash(hash), true);
      // Back to Keycloak's shape, unchanged.
      const back = exportCredential(hash, 0)!;
      assert.deepEqual(JSON.parse(back.credentialData!), { hashIterations: iterations, algorithm, additionalParameters: {} });
      assert.equal(JSON.parse(back.secretData!).value, value.toString('base64'));
    });
  }

  test('the deprecated hashedSaltedValue shape', async () => {
    const salt = randomBytes(16);
    const value = pbkdf2Sync(password, salt, 27_500, 64, 'sha256');
    const hash = await importedHash({ type: 'password', hashedSaltedValue: value.toString('base64'), salt: salt.toString('base64'), hashIterations: 27_500, algorithm: 'pbkdf2-sha256' });
    assert.equal(await verifyPassword(hash, password), true);
    assert.equal(await verifyPassword(hash, 'wrong'), false);
  });

  // @node-rs/argon2: algorithm 0 = Argon2d, 1 = Argon2i, 2 = Argon2id; version 0 = 0x10 (1.0), 1 = 0x13 (1.3).
  const argonCases: Array<[string, number, string, number]> = [
    ['id', 2, '1.3', 1],
    ['i', 1, '1.3', 1],
    ['d', 0, '1.3', 1],
    ['id', 2, '1.0', 0],
    ['i', 1, '1.0', 0],
  ];
  for (const [type, algorithm, version, v] of argonCases) {
    test(`argon2 type ${type}, version ${version} (Keycloak 25+ parameters)`, async () => {
      const salt = randomBytes(16);
      const value = await hashRaw(password, { algorithm, version: v, memoryCost: 7168, timeCost: 5, parallelism: 1, outputLen: 32, salt });
      const params = { hashLength: ['32'], memory: ['7168'], type: [type], version: [version], parallelism: ['1'] };
      const hash = await importedHash(credential('argon2', 5, salt, value, params));
      assert.ok(hash.startsWith(`$argon2${type}$v=${v ? 19 : 16}$m=7168,t=5,p=1$`), hash);
      assert.equal(await verifyPassword(hash, password), true);
      assert.equal(await verifyPassword(hash, 'wrong'), false);
      assert.equal(needsRehash(hash), true);
      const back = exportCredential(hash, 0)!;
      assert.deepEqual(JSON.parse(back.credentialData!), { hashIterations: 5, algorithm: 'argon2', additionalParameters: params });
      assert.equal(JSON.parse(back.secretData!).value, value.toString('base64'));
      assert.equal(JSON.parse(back.secretData!).salt, salt.toString('base64'));
    });
  }

  test('argon2 with other parameters and a 64-byte hash', async () => {
    const salt = randomBytes(16);
    const value = await hashRaw(password, { algorithm: 2, version: 1, memoryCost: 4096, timeCost: 3, parallelism: 2, outputLen: 64, salt });
    const hash = await importedHash(credential('argon2', 3, salt, value, { hashLength: ['64'], memory: ['4096'], type: ['id'], version: ['1.3'], parallelism: ['2'] }));
    assert.equal(await verifyPassword(hash, password), true);
  });

  test('a PHC string in value (a third-party argon2 provider) and a plain value', async () => {
    const phc = await hashPassword(password);
    assert.deepEqual(importCredential({ type: 'password', value: phc }), { hash: phc, algorithm: 'argon2' });
    assert.deepEqual(importCredential({ type: 'password', value: 'plain-password' }), { plain: 'plain-password' });
  });

  test("Realmgate's own argon2id exports as a Keycloak argon2 credential and needs no re-hash", async () => {
    const own = await hashPassword(password);
    assert.equal(needsRehash(own), false);
    const back = exportCredential(own, 0)!;
    const data = JSON.parse(back.credentialData!);
    assert.equal(data.algorithm, 'argon2');
    assert.deepEqual(data.additionalParameters.type, ['id']);
    assert.equal(await verifyPassword(await importedHash(back), password), true);
  });

  test('unusable credentials are reported, never guessed', () => {
    const salt = randomBytes(16).toString('base64');
    const bad: Array<[KeycloakCredential, RegExp]> = [
      [{ secretData: JSON.stringify({ value: 'AAAA', salt }), credentialData: JSON.stringify({ hashIterations: 1, algorithm: 'bcrypt' }) }, /unknown hash algorithm "bcrypt"/],
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64') }), credentialData: JSON.stringify({ hashIterations: 1, algorithm: 'pbkdf2' }) }, /salt/],
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64'), salt }), credentialData: JSON.stringify({ algorithm: 'pbkdf2-sha256' }) }, /hashIterations/],
      [{ secretData: '{not json', credentialData: '{}' }, /secretData is not JSON/],
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64'), salt }), credentialData: JSON.stringify({ hashIterations: 1, algorithm: 'argon2', additionalParameters: { type: ['x'] } }) }, /argon2 type/],
      [{ hashedSaltedValue: 'AAAA', hashIterations: 1, algorithm: 'md5', salt }, /unknown hash algorithm/],
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64'), salt }), credentialData: JSON.stringify({ hashIterations: 5, algorithm: 'argon2', additionalParameters: { memory: ['4194304'] } }) }, /argon2 memory "4194304" is out of range/],
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64'), salt }), credentialData: JSON.stringify({ hashIterations: 1e9, algorithm: 'pbkdf2-sha512' }) }, /hashIterations 1000000000 is out of range/],
      [{ value: '$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaA' }, /argon2 memory "4194304" is out of range/],
      [{ value: '$argon2id$v=19$m=19456' }, /malformed/],
    ];
    for (const [c, reason] of bad) {
      const r = importCredential(c);
      assert.ok('unusable' in r, JSON.stringify(r));
      assert.match(r.unusable, reason);
    }
  });

  test("the fixture's known passwords (master/admin = admin; Migration/offline-test-user = password2)", async () => {
    const realms = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Array<{ realm: string; users?: Array<{ username: string; credentials?: KeycloakCredential[] }> }>;
    const cred = (realm: string, user: string): KeycloakCredential => realms.find((r) => r.realm === realm)!.users!.find((u) => u.username === user)!.credentials!.find((c) => c.type === 'password')!;
    const admin = await importedHash(cred('master', 'admin'));
    assert.equal(await verifyPassword(admin, 'admin'), true);
    assert.equal(await verifyPassword(admin, 'admin2'), false);
    const offline = await importedHash(cred('Migration', 'offline-test-user'));
    assert.equal(await verifyPassword(offline, 'password2'), true);
    assert.equal(await verifyPassword(offline, 'password'), false);
  });
});
