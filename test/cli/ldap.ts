// The ldap commands' tests; run once per database by ldap-sqlite.test.ts and ldap-postgres.test.ts (test/helpers/db.ts, onlyDialect).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { REALM, basic, realmPath, startTestServer, type TestServer } from '../helpers/server.js';
import { LDAP_MISSING, PEOPLE, ROOT_DN, ROOT_PASSWORD, startLdap, type LdapServer } from '../helpers/ldap.js';
import { bindCredentialOf } from '../../src/admin/operations/user-storage.js';

// The ldap commands of the installed command (npm run build first) over the database of a running
// server, against a real slapd: a provider added from the command line signs a directory user in.
for (const dialect of dialects()) {
  describe(`realmgate ldap commands (${dialect})`, { skip: LDAP_MISSING }, () => {
    const { run, ok, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    let ldap: LdapServer;
    let dir: string;
    const saved = process.env.REALMGATE_KEY_SECRET;
    const printed: string[] = [];
    before(async () => {
      // The server and the commands seal the bind credential under one key-encryption secret.
      process.env.REALMGATE_KEY_SECRET = 'ldap commands test secret';
      ts = await startTestServer({ dialect });
      await ts.store.clients.update(REALM, ts.client.id, { directAccessGrantsEnabled: true });
      ldap = await startLdap({ people: [{ uid: 'lena', password: 'lena-pw', mail: 'lena@example.org', givenName: 'Lena', sn: 'Ldap' }] });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-ldap-cli-'));
    });
    after(async () => {
      await ts.close();
      await ldap.stop();
      fs.rmSync(dir, { recursive: true, force: true });
      if (saved === undefined) delete process.env.REALMGATE_KEY_SECRET;
      else process.env.REALMGATE_KEY_SECRET = saved;
    });
    const grant = (username: string, password: string) =>
      ts.app.inject({
        method: 'POST',
        url: realmPath('/protocol/openid-connect/token'),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ts.client.id, ts.client.secret) },
        payload: new URLSearchParams({ grant_type: 'password', username, password }).toString(),
      });

    test('add (credential from stdin), list, show, test; a directory user signs in; update --disabled; delete', async () => {
      const out = ok(['ldap', 'add', REALM, 'corp', '--url', ldap.url, '--users-dn', PEOPLE, '--bind-dn', ROOT_DN, '--bind-credential-stdin'], `${ROOT_PASSWORD}\n`);
      printed.push(out);
      assert.match(out, /^created LDAP provider corp in realm test$/m);
      assert.match(out, /^bind credential: +set \(not shown\)$/m);
      assert.match(out, /^search scope: +one level \(1\)$/m);
      const [p] = await ts.store.userStorage.list(REALM);
      assert.equal(await bindCredentialOf(ts.store, p!), ROOT_PASSWORD);
      assert.equal((await grant('lena', 'lena-pw')).statusCode, 200);
      const list = ok(['ldap', 'list', REALM]);
      assert.equal(list, `${p!.id}\tcorp\tenabled\t${ldap.url}\t${PEOPLE}\n`);
      const json = JSON.parse(ok(['ldap', 'show', REALM, 'corp', '--json'])) as { config: Record<string, string[]>; subComponents: unknown[] };
      assert.deepEqual(json.config.bindCredential, ['**********']);
      assert.equal(json.subComponents.length, 6);
      printed.push(ok(['ldap', 'test', REALM, 'corp']));
      // A credential from a file; then a wrong one fails the test in one line.
      fs.writeFileSync(path.join(dir, 'bind'), 'wrong-one\n', { mode: 0o600 });
      printed.push(ok(['ldap', 'update', REALM, 'corp', '--bind-credential-file', path.join(dir, 'bind'), '--scope', 'subtree']));
      fails(['ldap', 'test', REALM, 'corp'], /LDAP provider corp: .*49/);
      fs.writeFileSync(path.join(dir, 'bind'), `${ROOT_PASSWORD}\n`);
      ok(['ldap', 'update', REALM, p!.id, '--bind-credential-file', path.join(dir, 'bind')]);
      // Another directory or bind DN needs the credential again; --anonymous drops it.
      fails(['ldap', 'update', REALM, 'corp', '--url', 'ldap://127.0.0.1:1'], /bind-credential-stdin or --bind-credential-file\) to change config\.connectionUrl or config\.bindDn/);
      fails(['ldap', 'update', REALM, 'corp', '--bind-dn', `cn=other,${PEOPLE}`], /must be given again/);
      fails(['ldap', 'update', REALM, 'corp', '--anonymous', '--bind-credential-file', path.join(dir, 'bind')], /--anonymous binds with no credential/);
      assert.equal(await bindCredentialOf(ts.store, (await ts.store.userStorage.get(REALM, p!.id))!), ROOT_PASSWORD);
      const disabled = ok(['ldap', 'update', REALM, 'corp', '--disabled']);
      assert.match(disabled, /^state: +disabled$/m);
      assert.equal((await grant('lena', 'lena-pw')).json().error, 'invalid_grant');
      assert.match(ok(['ldap', 'update', REALM, 'corp', '--anonymous', '--url', 'ldap://127.0.0.1:1']), /^bind credential: +none$/m);
      assert.equal((await ts.store.userStorage.get(REALM, p!.id))!.sealedBindCredential, null);
      fails(['ldap', 'delete', REALM, 'corp'], /add --yes/);
      ok(['ldap', 'delete', REALM, 'corp', '--yes']);
      assert.deepEqual(await ts.store.userStorage.list(REALM), []);
      for (const o of printed) assert.ok(!o.includes(ROOT_PASSWORD), 'the credential is never printed');
    });

    test('ldaps:// and StartTLS verify the certificate; NODE_EXTRA_CA_CERTS trusts a private CA', async () => {
      const secure = await startLdap({ tls: true, people: [{ uid: 'tess', password: 'tess-pw' }] });
      try {
        const credential = path.join(dir, 'tls-bind');
        fs.writeFileSync(credential, ROOT_PASSWORD, { mode: 0o600 });
        ok(['ldap', 'add', REALM, 'tls', '--url', secure.ldapsUrl!, '--users-dn', PEOPLE, '--bind-dn', ROOT_DN, '--bind-credential-file', credential]);
        ok(['ldap', 'add', REALM, 'starttls', '--url', secure.url, '--start-tls', '--users-dn', PEOPLE, '--bind-dn', ROOT_DN, '--bind-credential-file', credential, '--disabled']);
        // Not trusted: refused (never a bind over an unverified connection).
        fails(['ldap', 'test', REALM, 'tls'], /LDAP provider tls: .*(self.signed|certificate)/i);
        fails(['ldap', 'test', REALM, 'starttls'], /LDAP provider starttls: .*(self.signed|certificate)/i);
        // This server process does not trust it either: the user is told to try again later.
        const res = await grant('tess', 'tess-pw');
        assert.equal(res.statusCode, 503);
        assert.equal(res.json().error, 'temporarily_unavailable');
        // The private CA added as the docs say: both connect and bind.
        process.env.NODE_EXTRA_CA_CERTS = secure.caFile;
        try {
          assert.match(ok(['ldap', 'test', REALM, 'tls']), /connected to ldaps:\/\/127\.0\.0\.1:\d+ and bound as/);
          assert.match(ok(['ldap', 'test', REALM, 'starttls']), /connected to ldap:\/\/127\.0\.0\.1:\d+ and bound as/);
        } finally {
          delete process.env.NODE_EXTRA_CA_CERTS;
        }
        ok(['ldap', 'delete', REALM, 'tls', '--yes']);
        ok(['ldap', 'delete', REALM, 'starttls', '--yes']);
        ts.clock.advance(3600);
      } finally {
        await secure.stop();
      }
    });

    test('the bind credential never from argv; refusals in one line', () => {
      fails(['ldap', 'add', REALM, 'x', '--url', ldap.url, '--users-dn', PEOPLE, '--bind-dn', ROOT_DN, '--config', 'bindCredential=secret'], /never from the command line/);
      fails(['ldap', 'add', REALM, 'x', '--url', ldap.url, '--users-dn', PEOPLE, '--bind-dn', ROOT_DN], /--bind-credential-stdin or --bind-credential-file/);
      fails(['ldap', 'add', REALM, 'x', '--url', 'http://x', '--users-dn', PEOPLE, '--anonymous'], /ldap:\/\/ or ldaps:\/\//);
      fails(['ldap', 'show', REALM, 'nope'], /Could not find component nope/);
      const r = run(['ldap', 'add', REALM, 'x', '--url', ldap.url, '--users-dn', PEOPLE, '--bind-dn', ROOT_DN, '--bind-credential-stdin'], '\n');
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /empty/);
      assert.match(ok(['ldap', '--help']), /add \[options\] <realm> <name>/);
    });
  });
}
