import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cliDatabase, cliRunner } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';

// `client create|update --require-par on|off`, `--request-object`, `--request-object-alg` and
// `realm update --par-request-uri-lifespan` through the installed command (npm run build first).

for (const dialect of dialects()) {
  describe(`realmgate pushed authorization request settings (${dialect})`, () => {
    const database = cliDatabase(dialect, 'realmgate-par-');
    const { run, ok, fails } = cliRunner(() => database.url);

    test('client create and update set and show require.pushed.authorization.requests and the standard token exchange attributes; the realm sets the request_uri lifespan; --help lists them', async () => {
      ok(['realm', 'create', 'acme']);
      ok(['client', 'create', 'acme', 'strict', '--redirect-uri', 'https://strict.example/cb', '--require-par', 'on']);
      ok(['client', 'create', 'acme', 'usual', '--redirect-uri', 'https://usual.example/cb']);
      let r = run(['client', 'update', 'acme', 'strict', '--name', 'Strict']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /pushed requests:\s+required \(RFC 9126\)\n/);
      r = run(['client', 'update', 'acme', 'usual', '--name', 'Usual']);
      assert.match(r.stdout, /pushed requests:\s+optional\n/);
      r = run(['client', 'update', 'acme', 'strict', '--require-par', 'off']);
      assert.match(r.stdout, /pushed requests:\s+optional\n/);
      r = run(['client', 'update', 'acme', 'usual', '--require-par', 'on']);
      assert.match(r.stdout, /pushed requests:\s+required \(RFC 9126\)\n/);
      fails(['client', 'update', 'acme', 'usual', '--require-par', 'maybe'], /--require-par/);

      ok(['realm', 'update', 'acme', '--par-request-uri-lifespan', '30']);
      fails(['realm', 'update', 'acme', '--par-request-uri-lifespan', '7200'], /request_uri/);
      const { openDatabase } = await import('../../src/storage/database.js');
      const db = await openDatabase(database.url);
      try {
        const rows = await db.kysely.selectFrom('clients').select(['client_id', 'require_pushed_authorization_requests']).where('realm_id', '=', 'acme').where('client_id', 'in', ['strict', 'usual']).orderBy('client_id').execute();
        assert.deepEqual(rows.map((x) => [x.client_id, Number(x.require_pushed_authorization_requests)]), [['strict', 0], ['usual', 1]]);
        const realm = await db.kysely.selectFrom('realms').select('par_request_uri_lifespan').where('id', '=', 'acme').executeTakeFirstOrThrow();
        assert.equal(Number(realm.par_request_uri_lifespan), 30);
      } finally {
        await db.close();
      }
      // RFC 8693: Keycloak's standard.token.exchange.enabled and enableRefreshRequestedTokenType.
      r = run(['client', 'create', 'acme', 'exchanger', '--no-standard-flow', '--token-exchange', 'on', '--token-exchange-refresh', 'same-session']);
      assert.equal(r.status, 0, r.stderr);
      r = run(['client', 'update', 'acme', 'exchanger', '--name', 'Exchanger']);
      assert.match(r.stdout, /token exchange:\s+on \(RFC 8693\), refresh tokens: same session\n/);
      r = run(['client', 'update', 'acme', 'exchanger', '--token-exchange-refresh', 'no']);
      assert.match(r.stdout, /token exchange:\s+on \(RFC 8693\), refresh tokens: no\n/);
      r = run(['client', 'update', 'acme', 'exchanger', '--token-exchange', 'off']);
      assert.match(r.stdout, /token exchange:\s+off\n/);
      r = run(['client', 'update', 'acme', 'usual', '--token-exchange', 'on']);
      assert.match(r.stdout, /token exchange:\s+on \(RFC 8693\), refresh tokens: no\n/);
      fails(['client', 'update', 'acme', 'usual', '--token-exchange', 'maybe'], /--token-exchange takes on or off/);
      fails(['client', 'update', 'acme', 'usual', '--token-exchange-refresh', 'always'], /--token-exchange-refresh takes no or same-session/);
      ok(['client', 'update', 'acme', 'exchanger', '--token-exchange-refresh', 'same-session']);
      const db2 = await openDatabase(database.url);
      try {
        const rows = await db2.kysely.selectFrom('clients').select(['client_id', 'standard_token_exchange', 'token_exchange_refresh']).where('realm_id', '=', 'acme').where('client_id', 'in', ['exchanger', 'strict', 'usual']).orderBy('client_id').execute();
        assert.deepEqual(rows.map((x) => [x.client_id, Number(x.standard_token_exchange), x.token_exchange_refresh]), [['exchanger', 0, 'SAME_SESSION'], ['strict', 0, 'NO'], ['usual', 1, 'NO']]);
      } finally {
        await db2.close();
      }
      for (const cmd of ['create', 'update']) {
        const help = run(['client', cmd, '--help']).stdout;
        assert.match(help, /--token-exchange <on\|off>/);
        assert.match(help, /--token-exchange-refresh <no\|same-session>/);
      }
      assert.match(run(['client', 'create', '--help']).stdout, /--require-par <on\|off>/);
      assert.match(run(['client', 'update', '--help']).stdout, /--require-par <on\|off>/);
      assert.match(run(['realm', 'update', '--help']).stdout, /--par-request-uri-lifespan <s>/);
    });

    test('client create and update set and show dpop.bound.access.tokens (--dpop-bound-tokens); --help lists it', async () => {
      ok(['client', 'create', 'acme', 'bound', '--redirect-uri', 'https://bound.example/cb', '--dpop-bound-tokens', 'on']);
      let r = run(['client', 'update', 'acme', 'bound', '--name', 'Bound']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /DPoP:\s+required \(RFC 9449\)\n/);
      r = run(['client', 'update', 'acme', 'bound', '--dpop-bound-tokens', 'off']);
      assert.match(r.stdout, /DPoP:\s+optional\n/);
      r = run(['client', 'update', 'acme', 'usual', '--dpop-bound-tokens', 'on']);
      assert.match(r.stdout, /DPoP:\s+required \(RFC 9449\)\n/);
      fails(['client', 'update', 'acme', 'usual', '--dpop-bound-tokens', 'maybe'], /--dpop-bound-tokens/);
      const { openDatabase } = await import('../../src/storage/database.js');
      const db = await openDatabase(database.url);
      try {
        const rows = await db.kysely.selectFrom('clients').select(['client_id', 'dpop_bound_access_tokens']).where('realm_id', '=', 'acme').where('client_id', 'in', ['bound', 'usual']).orderBy('client_id').execute();
        assert.deepEqual(rows.map((x) => [x.client_id, Number(x.dpop_bound_access_tokens)]), [['bound', 0], ['usual', 1]]);
      } finally {
        await db.close();
      }
      assert.match(run(['client', 'create', '--help']).stdout, /--dpop-bound-tokens <on\|off>/);
      assert.match(run(['client', 'update', '--help']).stdout, /--dpop-bound-tokens <on\|off>/);
    });

    test('client create and update set and show request.object.required and request.object.signature.alg (RFC 9101); keys for a client-secret client with request objects; --help lists them', async () => {
      ok(['realm', 'create', 'jarr']);
      const fs = await import('node:fs');
      const file = `${fs.mkdtempSync('/tmp/jar-cli-')}/jwks.json`;
      fs.writeFileSync(file, JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] }));
      let r = run(['client', 'create', 'jarr', 'signed', '--redirect-uri', 'https://signed.example/cb', '--request-object', 'request', '--request-object-alg', 'ES256', '--jwks-file', file]);
      assert.equal(r.status, 0, r.stderr);
      r = run(['client', 'update', 'jarr', 'signed', '--name', 'Signed']);
      assert.match(r.stdout, /request objects:\s+required: request only \(RFC 9101\), signed with ES256\n/);
      r = run(['client', 'update', 'jarr', 'signed', '--request-object', 'request-or-request-uri', '--request-object-alg', 'any']);
      assert.match(r.stdout, /request objects:\s+required: request or request_uri \(RFC 9101\), signed with any asymmetric algorithm\n/);
      r = run(['client', 'update', 'jarr', 'signed', '--request-object', 'request_uri only']);
      assert.match(r.stdout, /required: request_uri only/);
      r = run(['client', 'update', 'jarr', 'signed', '--request-object', 'not-required']);
      assert.match(r.stdout, /request objects:\s+optional, signed with any asymmetric algorithm\n/);
      fails(['client', 'update', 'jarr', 'signed', '--request-object', 'always'], /--request-object takes not-required, request, request-uri or request-or-request-uri/);
      fails(['client', 'update', 'jarr', 'signed', '--request-object-alg', 'HS256'], /request\.object\.signature\.alg must be/);
      // Keys without private_key_jwt or request objects are still refused.
      fails(['client', 'create', 'jarr', 'keys-only', '--redirect-uri', 'https://k.example/cb', '--jwks-file', file], /--auth-method private_key_jwt or --request-object/);
      const { openDatabase } = await import('../../src/storage/database.js');
      const db = await openDatabase(database.url);
      try {
        const row = await db.kysely.selectFrom('clients').select(['request_object_required', 'request_object_alg', 'jwt_keys']).where('realm_id', '=', 'jarr').where('client_id', '=', 'signed').executeTakeFirstOrThrow();
        assert.deepEqual([row.request_object_required, row.request_object_alg], ['not required', null]);
        assert.match(String(row.jwt_keys), /f83OJ3D2/);
      } finally {
        await db.close();
      }
      for (const cmd of ['create', 'update']) {
        const help = run(['client', cmd, '--help']).stdout;
        assert.match(help, /--request-object <required>/);
        assert.match(help, /--request-object-alg <alg\|any>/);
      }
    });
  });
}
