import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `client create|update --frontchannel-logout-url ... --frontchannel-logout-session-required on|off`
// through the installed command (npm run build first).

for (const dialect of dialects()) {
  describe(`realmgate client front-channel logout settings (${dialect})`, () => {
    const database = cliDatabase(dialect, 'fcl-realmgate-frontchannel-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('create and update set, show and clear the settings; bad URLs are refused in one line; --help names them', async () => {
      ok(['realm', 'create', 'acme']);
      ok(['client', 'create', 'acme', 'portal', '--redirect-uri', 'https://portal.example/cb', '--frontchannel-logout-url', 'https://portal.example/logout?via=fc', '--frontchannel-logout-session-required', 'off']);
      let r = run(['client', 'update', 'acme', 'portal', '--name', 'Portal']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /front-channel:\s+https:\/\/portal\.example\/logout\?via=fc \(without iss and sid\)\n/);
      r = run(['client', 'update', 'acme', 'portal', '--frontchannel-logout-session-required', 'on']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /front-channel:\s+https:\/\/portal\.example\/logout\?via=fc \(with iss and sid\)\n/);
      r = run(['client', 'update', 'acme', 'portal', '--frontchannel-logout-url', 'http://portal.internal:8080/fc']);
      assert.match(r.stdout, /front-channel:\s+http:\/\/portal\.internal:8080\/fc \(with iss and sid\)\n/);
      for (const bad of ['https://portal.example/fc#x', 'javascript:alert(1)', 'ftp://portal.example/fc', 'portal/fc', 'https://u:p@portal.example/fc']) {
        fails(['client', 'update', 'acme', 'portal', '--frontchannel-logout-url', bad], /front-channel logout URL/);
      }
      fails(['client', 'create', 'acme', 'bad', '--redirect-uri', 'https://bad.example/cb', '--frontchannel-logout-url', 'https://bad.example/fc#frag'], /fragment/);
      fails(['client', 'update', 'acme', 'portal', '--frontchannel-logout-session-required', 'maybe'], /takes on or off/);
      // The switch goes with the URL: on with one, off when it is removed.
      const { openDatabase } = await import('../../src/storage/database.js');
      const row = async (): Promise<Record<string, unknown>> => {
        const db = await openDatabase(database.url);
        try {
          const r = await db.kysely.selectFrom('clients').select(['frontchannel_logout', 'frontchannel_logout_url', 'frontchannel_logout_session_required']).where('client_id', '=', 'portal').executeTakeFirstOrThrow();
          return { ...r, frontchannel_logout: Number(r.frontchannel_logout), frontchannel_logout_session_required: Number(r.frontchannel_logout_session_required) };
        } finally {
          await db.close();
        }
      };
      assert.deepEqual(await row(), { frontchannel_logout: 1, frontchannel_logout_url: 'http://portal.internal:8080/fc', frontchannel_logout_session_required: 1 });
      r = run(['client', 'update', 'acme', 'portal', '--frontchannel-logout-url', '']);
      assert.match(r.stdout, /front-channel:\s+\n/);
      assert.deepEqual(await row(), { frontchannel_logout: 0, frontchannel_logout_url: null, frontchannel_logout_session_required: 1 });

      for (const cmd of ['create', 'update']) {
        const help = run(['client', cmd, '--help']).stdout;
        assert.match(help, /--frontchannel-logout-url <url>/, cmd);
        assert.match(help, /--frontchannel-logout-session-required <on\|off>/, cmd);
      }
    });
  });
}
