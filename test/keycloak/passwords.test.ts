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
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64'), salt }), credentialData: JSON.stringify({ hashIterations: 5, algorithm: 'argon2', additionalParameters: { memory: ['4194304'] } }) }, /argon2 memory 4194304 is out of range/],
      [{ secretData: JSON.stringify({ value: randomBytes(32).toString('base64'), salt }), credentialData: JSON.stringify({ hashIterations: 1e9, algorithm: 'pbkdf2-sha512' }) }, /hashIterations 1000000000 is out of range/],
      [{ value: '$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaA' }, /argon2 memory 4194304 is out of range/],
      [{ value: '$argon2id$v=19$m=19456' }, /malformed/],
    ];
    for (const [c, reason] of bad) {
      const r = importCredential(c);
      assert.ok('unusable' in r, JSON.stringify(r));
      assert.match(r.unusable, reason);
    }
  });

  test('no accepted PBKDF2 or argon2 parameters make one login cost more than the bounds meant for iterations and memory', async () => {
    const salt = randomBytes(16).toString('base64');
    const pbkdf2 = (algorithm: string, hashIterations: unknown, bytes: number): KeycloakCredential => ({
      secretData: JSON.stringify({ value: randomBytes(bytes).toString('base64'), salt }),
      credentialData: JSON.stringify({ hashIterations, algorithm }),
    });
    const argon2 = (t: number, memory: string, parallelism: string, bytes = 32): KeycloakCredential => ({
      secretData: JSON.stringify({ value: randomBytes(bytes).toString('base64'), salt }),
      credentialData: JSON.stringify({ hashIterations: t, algorithm: 'argon2', additionalParameters: { memory: [memory], parallelism: [parallelism], type: ['id'], version: ['1.3'] } }),
    });
    const phc = (m: number, t: number, p: number): string => `$argon2id$v=19$m=${m},t=${t},p=${p}$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA`;
    const bad: Array<[KeycloakCredential, RegExp]> = [
      // The tester's credential: 10 000 000 iterations of a 20 000-byte key (1000 SHA-1 blocks, some 40 minutes a login).
      [pbkdf2('pbkdf2', 10_000_000, 20_000), /the stored hash is too long \(20000 bytes, at most 512\)/],
      [pbkdf2('pbkdf2-sha256', 10_000_000, 64), /10000000 iterations for a 64-byte key cost 20000000 HMAC computations a login, more than 10000000/],
      [pbkdf2('pbkdf2-sha512', 6_000_000, 512), /more than 10000000/],
      [pbkdf2('pbkdf2-sha256', 27_500, 8), /the stored hash is too short/],
      [pbkdf2('pbkdf2-sha256', '27500', 32), /^hashIterations must be a number, not a string$/],
      [argon2(1, '1', '16'), /less than 8 KiB per lane \(parallelism 16\): no such hash can be verified/],
      [argon2(100, '262144', '1'), /262144 KiB x 100 iterations is more work than 1048576 KiB a login/],
      [argon2(5, '7168', '1', 100_000), /the argon2 hash has 100000 bytes/],
      [{ value: phc(1, 1, 16) }, /less than 8 KiB per lane/],
      [{ value: phc(262_144, 100, 1) }, /more work than/],
    ];
    for (const [c, reason] of bad) {
      const r = importCredential(c);
      assert.ok('unusable' in r, `${reason}: ${JSON.stringify(r).slice(0, 200)}`);
      assert.match(r.unusable, reason);
    }
    // Keycloak's own defaults stay within every bound.
    for (const [algorithm, iterations, bytes] of [['pbkdf2', 1_300_000, 64], ['pbkdf2-sha256', 600_000, 32], ['pbkdf2-sha256', 27_500, 64], ['pbkdf2-sha512', 210_000, 64]] as const) {
      assert.ok('hash' in importCredential(pbkdf2(algorithm, iterations, bytes)), `${algorithm} ${iterations}`);
    }
    assert.ok('hash' in importCredential(argon2(5, '7168', '1')));
    // A hash stored before the bounds (in the password column) is not verified either.
    const costly = `$kc-pbkdf2$i=10000000$${salt}$${randomBytes(20_000).toString('base64')}`;
    const started = performance.now();
    assert.equal(await verifyPassword(costly, 'any password'), false);
    assert.equal(await verifyPassword(phc(262_144, 100, 1), 'any password'), false);
    assert.ok(performance.now() - started < 1000, 'refused without deriving a key');
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
