import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { dialects } from '../helpers/db.js';
import { startTestServer, REALM, type TestServer } from '../helpers/server.js';
import { runAuthorization } from '../helpers/flow.js';
import { runProgram } from '../helpers/program.js';

// go-oidc with golang.org/x/oauth2 (Debian's golang-github-coreos-go-oidc-dev, built with Debian's Go in
// GOPATH mode: no download) as an independent relying party, with their defaults: discovery, the code
// exchange (x/oauth2 picks the client authentication itself), the id token verified against the JWKS,
// userinfo, and a refresh through oauth2's TokenSource. The program is test/e2e/go-oidc/main.go.
const GO = '/usr/bin/go';
const GOPATH = '/usr/share/gocode';
const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'go-oidc', 'main.go');
const available = fs.existsSync(GO) && fs.existsSync(path.join(GOPATH, 'src/github.com/coreos/go-oidc/oidc.go'));
const SKIP = 'golang-go and golang-github-coreos-go-oidc-dev are not installed (.ci/run installs them)';

for (const dialect of dialects()) {
  describe(`go-oidc as the relying party (${dialect})`, { skip: available ? false : SKIP }, () => {
    let ts: TestServer;
    let dir: string;
    let binary: string;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-go-oidc-'));
      binary = path.join(dir, 'rp');
      const built = spawnSync(GO, ['build', '-o', binary, SOURCE], {
        env: { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: path.join(os.tmpdir(), 'rg-go-cache') },
        encoding: 'utf8',
      });
      assert.equal(built.status, 0, built.stderr);
      ts = await startTestServer({ dialect, listen: true });
    });
    after(async () => {
      await ts?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('discovery, code exchange, id token, userinfo and a refresh, with go-oidc and x/oauth2 defaults', async () => {
      const r = await runAuthorization(ts, { query: { scope: 'openid core_data offline_access', nonce: 'go-nonce-1' } });
      assert.ok(r.code);
      const res = await runProgram(binary, [JSON.stringify({
        issuer: `${ts.baseUrl}/auth/realms/${REALM}`,
        client_id: ts.client.id,
        client_secret: ts.client.secret,
        redirect_uri: ts.client.redirectUri,
        code: r.code,
      })]);
      assert.equal(res.code, 0, res.err);
      const out = JSON.parse(res.out) as Record<string, unknown>;
      assert.equal(out.token_type, 'Bearer');
      assert.equal(out.id_subject, ts.user.id);
      assert.deepEqual(out.id_audience, [ts.client.id]);
      assert.equal(out.nonce, 'go-nonce-1');
      assert.equal(out.userinfo_subject, ts.user.id);
      assert.equal(out.userinfo_email, 'alice@example.com');
      assert.equal(out.refreshed_subject, ts.user.id);
      assert.notEqual(out.refreshed_refresh, out.refresh_token, 'every refresh returns a new refresh token');
      assert.equal(decodeJwt(out.refreshed_access as string).azp, ts.client.id);
      // The refresh token go-oidc started with was rotated: presented again, it is refused.
      const reuse = await fetch(`${ts.baseUrl}/auth/realms/${REALM}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${ts.client.id}:${ts.client.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: out.refresh_token as string }).toString(),
      });
      assert.equal(reuse.status, 400);
    });
  });
}
