import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `client create|update --backchannel-logout-url ...` through the installed command (npm run build first).

for (const dialect of dialects()) {
  describe(`realmgate client back-channel logout settings (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-backchannel-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('create and update set, show and clear the settings; bad URLs are refused in one line', async () => {
      ok(['realm', 'create', 'acme']);
      ok(['client', 'create', 'acme', 'portal', '--redirect-uri', 'https://portal.example/cb', '--backchannel-logout-url', 'http://portal.internal:8080/logout?via=bc', '--no-backchannel-logout-session-required']);
      let r = run(['client', 'update', 'acme', 'portal', '--name', 'Portal']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /back-channel:\s+http:\/\/portal\.internal:8080\/logout\?via=bc \(without sid\)\n/);
      r = run(['client', 'update', 'acme', 'portal', '--backchannel-logout-session-required', '--backchannel-logout-revoke-offline-tokens']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /back-channel:\s+http:\/\/portal\.internal:8080\/logout\?via=bc \(with sid\), revokes offline tokens\n/);
      r = run(['client', 'update', 'acme', 'portal', '--backchannel-logout-url', 'https://portal.example/bc', '--no-backchannel-logout-revoke-offline-tokens']);
      assert.match(r.stdout, /back-channel:\s+https:\/\/portal\.example\/bc \(with sid\)\n/);
      for (const bad of ['https://portal.example/bc#x', 'ftp://portal.example/bc', 'portal/bc', 'https://u:p@portal.example/bc']) {
        fails(['client', 'update', 'acme', 'portal', '--backchannel-logout-url', bad], /back-channel logout URL/);
      }
      fails(['client', 'create', 'acme', 'bad', '--redirect-uri', 'https://bad.example/cb', '--backchannel-logout-url', 'https://bad.example/bc#frag'], /fragment/);
      r = run(['client', 'update', 'acme', 'portal', '--backchannel-logout-url', '']);
      assert.match(r.stdout, /back-channel:\s+\n/);
      const { openDatabase } = await import('../../src/storage/database.js');
      const db = await openDatabase(database.url);
      try {
        const row = await db.kysely.selectFrom('clients').select(['backchannel_logout_url', 'backchannel_logout_session_required', 'backchannel_logout_revoke_offline']).where('client_id', '=', 'portal').executeTakeFirstOrThrow();
        assert.deepEqual({ ...row, backchannel_logout_session_required: Number(row.backchannel_logout_session_required), backchannel_logout_revoke_offline: Number(row.backchannel_logout_revoke_offline) }, { backchannel_logout_url: null, backchannel_logout_session_required: 1, backchannel_logout_revoke_offline: 0 });
      } finally {
        await db.close();
      }
      const help = run(['client', 'update', '--help']).stdout;
      assert.match(help, /--backchannel-logout-url <url>/);
      assert.match(help, /--no-backchannel-logout-session-required/);
      assert.match(run(['client', 'create', '--help']).stdout, /--backchannel-logout-revoke-offline-tokens/);
    });
  });
}
