import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { dialects } from '../helpers/db.js';
import { REALM } from '../helpers/server.js';
import { errorOf, serviceAccountAdmin, startAdminServer, statusOf, type AdminTestServer } from './helpers.js';

const TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ATTR = 'jwt.credential';

/** A self-signed certificate made by the openssl binary: its PEM, its base64 DER and its private key. */
function certificate(cn: string): { pem: string; der: string; key: crypto.KeyObject } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${dir}/k.pem`, '-out', `${dir}/c.pem`, '-days', '1', '-subj', `/CN=${cn}`], { stdio: 'ignore' });
    const pem = fs.readFileSync(`${dir}/c.pem`, 'utf8');
    return { pem, der: new crypto.X509Certificate(pem).raw.toString('base64'), key: crypto.createPrivateKey(fs.readFileSync(`${dir}/k.pem`)) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** keycloak-admin-client's upload payload, as Keycloak's admin console builds it: the format, and the file. */
function form(keystoreFormat: string | undefined, file: string | undefined): FormData {
  const fd = new FormData();
  if (keystoreFormat !== undefined) fd.append('keystoreFormat', keystoreFormat);
  if (file !== undefined) fd.append('file', new Blob([file]), 'key-file');
  return fd;
}

// Keycloak's client "Keys" tab (ClientAttributeCertificateResource, attr jwt.credential) through
// keycloak-admin-client 26's getKeyInfo, uploadCertificate, uploadKey, generateKey, downloadKey and
// generateAndDownloadKey, with the keys proved at the real token endpoint (private_key_jwt).
for (const dialect of dialects()) {
  describe(`admin API: client certificates (${dialect})`, () => {
    let ts: AdminTestServer;
    let a: ReturnType<typeof certificate>;
    let b: ReturnType<typeof certificate>;
    const id = 'cert-client';
    before(async () => {
      ts = await startAdminServer({ dialect });
      a = certificate('key-a');
      b = certificate('key-b');
      await ts.kc.clients.create({ realm: REALM, clientId: id, clientAuthenticatorType: 'client-jwt', serviceAccountsEnabled: true, standardFlowEnabled: false });
    });
    after(() => ts.close());

    /** client_credentials with an assertion signed by `key`: the token endpoint's status. */
    async function signIn(key: crypto.KeyObject): Promise<number> {
      const t = Math.floor(ts.clock.nowMs() / 1000);
      const jwt = await new SignJWT({ jti: crypto.randomUUID() }).setProtectedHeader({ alg: 'ES256' }).setIssuer(id).setSubject(id).setAudience(`${ts.baseUrl}/auth/realms/${REALM}`).setIssuedAt(t).setExpirationTime(t + 60).sign(key);
      const r = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: TYPE, client_assertion: jwt }) });
      await r.body?.cancel();
      return r.status;
    }
    const keyInfo = () => ts.kc.clients.getKeyInfo({ realm: REALM, id, attr: ATTR });
    const spki = (k: crypto.KeyObject): string => crypto.createPublicKey(k).export({ type: 'spki', format: 'der' }).toString('base64');

    test('upload a certificate, sign in with its key; another certificate replaces it; a public key, a JWKS', async () => {
      const updates = async (): Promise<number> => (await ts.store.adminEvents.list(REALM)).filter((e) => e.resourcePath === `clients/${id}` && e.operation === 'UPDATE').length;
      const updatesBefore = await updates();
      assert.deepEqual(await keyInfo(), {}, 'no key yet');
      assert.equal(await signIn(a.key), 401);

      const up = await ts.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, form('Certificate PEM', a.pem));
      assert.deepEqual(up, { certificate: a.der });
      assert.deepEqual(await keyInfo(), { certificate: a.der });
      assert.equal((await ts.kc.clients.findOne({ realm: REALM, id }))!.attributes!['jwt.credential.certificate'], a.der);
      assert.equal(await signIn(a.key), 200, "the certificate's key signs the client in");

      // Another certificate (through the other upload path, Keycloak's uploadKey): the first key no longer works.
      await ts.kc.clients.uploadKey({ realm: REALM, id, attr: ATTR }, form('Certificate PEM', b.pem));
      assert.deepEqual(await keyInfo(), { certificate: b.der });
      assert.equal(await signIn(a.key), 401, 'the replaced certificate is refused');
      assert.equal(await signIn(b.key), 200);

      // A public key (PEM): stored as base64 DER, the certificate gone.
      const pub = crypto.createPublicKey(a.key).export({ type: 'spki', format: 'pem' }).toString();
      assert.deepEqual(await ts.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, form('Public Key PEM', pub)), { publicKey: spki(a.key) });
      assert.deepEqual(await keyInfo(), { publicKey: spki(a.key) });
      assert.equal(await signIn(a.key), 200);
      assert.equal(await signIn(b.key), 401);

      // A JWKS: Keycloak shows its signature key and kid; the inline JWKS is switched on.
      const jwks = JSON.stringify({ keys: [{ ...crypto.createPublicKey(b.key).export({ format: 'jwk' }), kid: 'b-1', use: 'sig' }] });
      assert.deepEqual(await ts.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, form('JSON Web Key Set', jwks)), { publicKey: spki(b.key), kid: 'b-1' });
      const attrs = (await ts.kc.clients.findOne({ realm: REALM, id }))!.attributes!;
      assert.equal(attrs['use.jwks.string'], 'true');
      assert.equal(attrs['jwks.string'], jwks);
      assert.equal(attrs['jwt.credential.public.key'], undefined);
      assert.equal(await signIn(b.key), 200);
      assert.equal(await signIn(a.key), 401);

      // And back to a certificate: the inline JWKS goes.
      await ts.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, form('Certificate PEM', a.pem));
      const back = (await ts.kc.clients.findOne({ realm: REALM, id }))!.attributes!;
      assert.equal(back['use.jwks.string'], 'false');
      assert.equal(back['jwks.string'], undefined);
      assert.equal(await signIn(a.key), 200);
      assert.equal(await signIn(b.key), 401);

      // Each upload is a client change, recorded as one.
      assert.equal((await updates()) - updatesBefore, 5);
    });

    test('generate, download and generate-and-download are refused (400) and say to upload a certificate or set a JWKS URL', async () => {
      const was = await keyInfo();
      for (const call of [
        () => ts.kc.clients.generateKey({ realm: REALM, id, attr: ATTR }),
        () => ts.kc.clients.downloadKey({ realm: REALM, id, attr: ATTR }, { format: 'JKS', keyAlias: 'k', keyPassword: 'p', storePassword: 's' }),
        () => ts.kc.clients.generateAndDownloadKey({ realm: REALM, id, attr: ATTR }, { format: 'PKCS12', keyAlias: 'k', keyPassword: 'p', storePassword: 's' }),
      ]) {
        const e = await errorOf(call());
        assert.equal(e.status, 400);
        assert.match(String(e.body.errorMessage), /does not generate key pairs or keystores/);
        assert.match(String(e.body.errorMessage), /upload/);
        assert.match(String(e.body.errorMessage), /jwks\.url/);
      }
      assert.deepEqual(await keyInfo(), was, 'nothing changed');
    });

    test('refusals: bad uploads 400, too large 413, unknown client or attribute 404, and no 500 on a malformed body', async () => {
      const was = await keyInfo();
      const bad: Array<[FormData, RegExp]> = [
        [form('JKS', 'binary keystore'), /not taken/],
        [form('PKCS12', 'binary keystore'), /not taken/],
        [form(undefined, a.pem), /keystoreFormat cannot be null/],
        [form('Certificate PEM', undefined), /file cannot be empty/],
        [form('Certificate PEM', '   '), /file cannot be empty/],
        [form('Certificate PEM', 'not a certificate'), /certificate/],
        [form('Public Key PEM', a.pem), /public key/],
        [form('JSON Web Key Set', '{"keys": 3}'), /keys/],
        [form('JSON Web Key Set', JSON.stringify({ keys: [{ ...crypto.createPublicKey(a.key).export({ format: 'jwk' }), use: 'enc' }] })), /signatures/],
        [form('JSON Web Key Set', JSON.stringify({ keys: [a.key.export({ format: 'jwk' })] })), /public keys only/],
      ];
      for (const [fd, why] of bad) {
        const e = await errorOf(ts.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, fd));
        assert.equal(e.status, 400, String(why));
        assert.match(String(e.body.errorMessage), why);
      }
      const token = await ts.kc.getAccessToken();
      const post = async (contentType: string | undefined, body: string): Promise<number> => {
        const r = await fetch(`${ts.baseUrl}/auth/admin/realms/${REALM}/clients/${id}/certificates/${ATTR}/upload-certificate`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...(contentType ? { 'content-type': contentType } : {}) }, body });
        await r.body?.cancel();
        return r.status;
      };
      assert.equal(await post('multipart/form-data', 'no boundary at all'), 400);
      assert.equal(await post('multipart/form-data; boundary=xyz', 'junk\r\n--xyz\r\nno headers end'), 400);
      assert.equal(await post('multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="keystoreFormat"\r\n\r\nCertificate PEM\r\n--xyz\r\nContent-Disposition: form-data; name="file"; filename="c"\r\n\r\n\u0000\u00ff\ufffd\r\n--xyz--'), 400);
      assert.equal(await post('application/json', '{"keystoreFormat": "Certificate PEM"}'), 400);
      assert.equal(await post('multipart/form-data; boundary=xyz', `--xyz\r\nContent-Disposition: form-data; name="file"\r\n\r\n${'A'.repeat(70 * 1024)}\r\n--xyz--`), 413);
      assert.deepEqual(await keyInfo(), was, 'nothing changed');

      assert.equal(await statusOf(ts.kc.clients.getKeyInfo({ realm: REALM, id, attr: 'saml.signing' })), 404);
      assert.equal(await statusOf(ts.kc.clients.uploadCertificate({ realm: REALM, id, attr: 'saml.signing' }, form('Certificate PEM', a.pem))), 404);
      assert.equal(await statusOf(ts.kc.clients.getKeyInfo({ realm: REALM, id: 'no-such-client', attr: ATTR })), 404);
      assert.equal(await statusOf(ts.kc.clients.uploadCertificate({ realm: REALM, id: 'no-such-client', attr: ATTR }, form('Certificate PEM', a.pem))), 404);
    });

    test('view-clients reads the key, manage-clients changes it; others get 403', async () => {
      const viewer = await serviceAccountAdmin(ts, REALM, 'cert-viewer', ['view-clients']);
      assert.deepEqual(await viewer.kc.clients.getKeyInfo({ realm: REALM, id, attr: ATTR }), await keyInfo());
      assert.equal(await statusOf(viewer.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, form('Certificate PEM', b.pem))), 403);
      assert.equal(await statusOf(viewer.kc.clients.uploadKey({ realm: REALM, id, attr: ATTR }, form('Certificate PEM', b.pem))), 403);
      assert.equal(await statusOf(viewer.kc.clients.generateKey({ realm: REALM, id, attr: ATTR })), 403, 'generating needs manage-clients');
      const nobody = await serviceAccountAdmin(ts, REALM, 'cert-nobody', ['view-users']);
      assert.equal(await statusOf(nobody.kc.clients.getKeyInfo({ realm: REALM, id, attr: ATTR })), 403);
      assert.equal(await statusOf(nobody.kc.clients.downloadKey({ realm: REALM, id, attr: ATTR }, { format: 'JKS' })), 403);
      const manager = await serviceAccountAdmin(ts, REALM, 'cert-manager', ['manage-clients']);
      await manager.kc.clients.uploadCertificate({ realm: REALM, id, attr: ATTR }, form('Certificate PEM', b.pem));
      assert.deepEqual(await keyInfo(), { certificate: b.der });
      assert.equal(await signIn(b.key), 200);
    });
  });
}
