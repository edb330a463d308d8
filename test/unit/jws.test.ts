import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { jwsSigner, signCompact } from '../../src/crypto/jws.js';

// Each algorithm's signature checked by an independent implementation (jose over WebCrypto).
for (const [alg, gen] of [
  ['RS256', 'RS256'],
  ['ES256', 'ES256'],
  ['EdDSA', 'Ed25519'],
] as const) {
  test(`${alg}: a compact JWS that jose verifies, with the header given and the payload unchanged`, async () => {
    const { privateKey, publicKey } = await generateKeyPair(gen, { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg };
    const signer = jwsSigner(alg, 'k1', jwk);
    const payload = JSON.stringify({ sub: 'ü', n: 1 });
    const token = await signCompact(signer, payload);
    const { payload: out, protectedHeader } = await compactVerify(token, publicKey);
    assert.equal(new TextDecoder().decode(out), payload);
    assert.deepEqual(protectedHeader, { alg, kid: 'k1', typ: 'JWT' });
    assert.ok(!/[=+/]/.test(token), 'base64url without padding');
    if (alg === 'ES256') assert.equal(Buffer.from(token.split('.')[2]!, 'base64url').length, 64, 'R || S, not DER (RFC 7518 3.4)');
    const typed = await signCompact(signer, payload, 'at+jwt');
    assert.equal(decodeProtectedHeader(typed).typ, 'at+jwt');
    await compactVerify(typed, publicKey);
    // A signature over other bytes does not verify.
    const [h, , sig] = token.split('.');
    await assert.rejects(compactVerify(`${h}.${Buffer.from('{"sub":"x"}').toString('base64url')}.${sig}`, publicKey));
  });
}

test('an algorithm it does not know is refused at once', async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  assert.throws(() => jwsSigner('HS256', 'k', jwk), /unsupported/);
});
