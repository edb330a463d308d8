import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base32, fromBase32, hotp, matchTotp, otpauthUri, timeStep } from '../../src/crypto/totp.js';

// RFC 6238 Appendix B: the test vectors of TOTP with SHA-1, SHA-256 and SHA-512 (8 digits, 30 s).
const SEEDS = {
  HmacSHA1: Buffer.from('12345678901234567890'),
  HmacSHA256: Buffer.from('12345678901234567890123456789012'),
  HmacSHA512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
} as const;
const VECTORS: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

test('RFC 6238 Appendix B: every vector, each algorithm', () => {
  for (const [time, sha1, sha256, sha512] of VECTORS) {
    const step = timeStep(time, 30);
    assert.equal(hotp(SEEDS.HmacSHA1, step, 8, 'HmacSHA1'), sha1, `SHA1 at ${time}`);
    assert.equal(hotp(SEEDS.HmacSHA256, step, 8, 'HmacSHA256'), sha256, `SHA256 at ${time}`);
    assert.equal(hotp(SEEDS.HmacSHA512, step, 8, 'HmacSHA512'), sha512, `SHA512 at ${time}`);
  }
});

test('RFC 4226 Appendix D: HOTP of the first counters (6 digits, SHA-1)', () => {
  const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  expected.forEach((code, counter) => assert.equal(hotp(SEEDS.HmacSHA1, counter, 6, 'HmacSHA1'), code));
});

test('a code matches its step, one step either side, and nothing else', () => {
  const o = { period: 30, digits: 8, algorithm: 'HmacSHA1' as const };
  assert.equal(matchTotp(SEEDS.HmacSHA1, '07081804', 1111111109, o), timeStep(1111111109, 30));
  // 1111111109 is step 37037036; the code of the step before and after still matches (window 1).
  assert.equal(matchTotp(SEEDS.HmacSHA1, '07081804', 1111111109 + 30, o), 37037036);
  assert.equal(matchTotp(SEEDS.HmacSHA1, '07081804', 1111111109 - 30, o), 37037036);
  assert.equal(matchTotp(SEEDS.HmacSHA1, '07081804', 1111111109 + 60, o), undefined);
  assert.equal(matchTotp(SEEDS.HmacSHA1, '07081804', 1111111109 + 60, { ...o, window: 2 }), 37037036);
  for (const bad of ['0708180', '070818045', '0708180x', '', ' 07081804']) assert.equal(matchTotp(SEEDS.HmacSHA1, bad, 1111111109, o), undefined, bad);
});

test('base32 (RFC 4648 10 vectors, unpadded) and the otpauth URI', () => {
  const vectors: Array<[string, string]> = [['', ''], ['f', 'MY'], ['fo', 'MZXQ'], ['foo', 'MZXW6'], ['foob', 'MZXW6YQ'], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI']];
  for (const [plain, encoded] of vectors) {
    assert.equal(base32(Buffer.from(plain)), encoded);
    assert.equal(fromBase32(encoded)!.toString(), plain);
    assert.equal(fromBase32(`${encoded.toLowerCase()}====`)!.toString(), plain);
  }
  assert.equal(fromBase32('MZ1W'), undefined);
  const uri = otpauthUri({ issuer: 'Acme Corp', account: 'alice@example.com', key: Buffer.from('foobar'), algorithm: 'HmacSHA1', digits: 6, period: 30 });
  assert.equal(uri, 'otpauth://totp/Acme%20Corp:alice%40example.com?secret=MZXW6YTBOI&issuer=Acme%20Corp&algorithm=SHA1&digits=6&period=30');
});
