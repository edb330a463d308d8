import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dialects } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { importKeycloakRealms } from '../../src/admin/operations/realm-import.js';
import { exportRealm } from '../../src/admin/keycloak/export.js';
import { cliActor } from '../../src/admin/operations/common.js';

const actor = { ...cliActor(), via: 'import' as const };
type Json = Record<string, unknown>;
const ATTR = 'require.pushed.authorization.requests';

// Keycloak's require.pushed.authorization.requests (a client attribute; "false" on every client of its
// exports) and parRequestUriLifespan (a realm attribute) move with a realm, and back out; so do the
// request object attributes (RFC 9101) request.object.required and request.object.signature.alg.
for (const dialect of dialects()) {
  describe(`Keycloak import and export: pushed authorization requests (${dialect})`, () => {
    let ts: TestServer;
    before(async () => {
      ts = await startTestServer({ dialect });
    });
    after(() => ts.close());

    const client = (clientId: string, attributes: Json): Json => ({
      clientId,
      protocol: 'openid-connect',
      publicClient: false,
      secret: 'a-generated-looking-secret-of-32-chars-0123',
      redirectUris: ['https://app.example.com/cb'],
      attributes,
    });

    test('the client attribute and the realm lifespan are kept, the switch noted; export writes both back; an import of the export gives the same', async () => {
      const realm = {
        realm: 'parx',
        enabled: true,
        attributes: { parRequestUriLifespan: '120' },
        clients: [client('strict', { [ATTR]: 'true' }), client('usual', { [ATTR]: 'false' }), client('older', {})],
      };
      const r = (await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(r.status, 'imported', JSON.stringify(r));
      assert.equal((await ts.store.clients.get('parx', 'strict'))!.requirePushedAuthorizationRequests, true);
      assert.equal((await ts.store.clients.get('parx', 'usual'))!.requirePushedAuthorizationRequests, false);
      assert.equal((await ts.store.clients.get('parx', 'older'))!.requirePushedAuthorizationRequests, false);
      assert.equal((await ts.store.realms.get('parx'))!.parRequestUriLifespan, 120);
      const strictLine = r.lines.find((l) => l.element === 'client strict');
      assert.match(JSON.stringify(strictLine), /pushed authorization requests required/);
      assert.doesNotMatch(JSON.stringify(r.lines.find((l) => l.element === 'client usual')), /pushed/);

      const exported = await exportRealm(ts.store, 'parx', { withSecrets: true });
      assert.equal((exported.attributes as Json).parRequestUriLifespan, '120');
      const attrsOf = (id: string): Json => ((exported.clients as Json[]).find((c) => c.clientId === id)!.attributes as Json);
      assert.equal(attrsOf('strict')[ATTR], 'true');
      assert.equal(attrsOf('usual')[ATTR], 'false');
      assert.equal(attrsOf('older')[ATTR], 'false');
      const again = (await importKeycloakRealms(ts.store, [{ ...exported, realm: 'parx2' }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(again.status, 'imported', JSON.stringify(again));
      assert.equal((await ts.store.clients.get('parx2', 'strict'))!.requirePushedAuthorizationRequests, true);
      assert.equal((await ts.store.realms.get('parx2'))!.parRequestUriLifespan, 120);
    });

    test('standard token exchange (RFC 8693): both attributes kept, the switch noted; export writes them back; a wrong value refuses the client', async () => {
      const ON = 'standard.token.exchange.enabled';
      const REFRESH = 'standard.token.exchange.enableRefreshRequestedTokenType';
      const realm = {
        realm: 'tex',
        enabled: true,
        clients: [client('exchanger', { [ON]: 'true', [REFRESH]: 'SAME_SESSION' }), client('plain', { [ON]: 'false' }), client('older', {}), client('odd', { [REFRESH]: 'sometimes' })],
      };
      const r = (await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor)).realms[0]!;
      const ex = (await ts.store.clients.get('tex', 'exchanger'))!;
      assert.deepEqual([ex.standardTokenExchange, ex.tokenExchangeRefresh], [true, 'SAME_SESSION']);
      const plain = (await ts.store.clients.get('tex', 'plain'))!;
      assert.deepEqual([plain.standardTokenExchange, plain.tokenExchangeRefresh], [false, 'NO']);
      assert.equal((await ts.store.clients.get('tex', 'older'))!.standardTokenExchange, false);
      assert.match(JSON.stringify(r.lines.find((l) => l.element === 'client exchanger')), /standard token exchange enabled/);
      assert.doesNotMatch(JSON.stringify(r.lines.find((l) => l.element === 'client plain')), /token exchange/);
      const odd = r.lines.find((l) => l.element.startsWith('client odd'));
      assert.equal(odd?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(odd?.reason ?? '', /enableRefreshRequestedTokenType must be "NO" or "SAME_SESSION"/);

      const exported = await exportRealm(ts.store, 'tex', { withSecrets: true });
      const attrsOf = (id: string): Json => ((exported.clients as Json[]).find((c) => c.clientId === id)!.attributes as Json);
      assert.deepEqual([attrsOf('exchanger')[ON], attrsOf('exchanger')[REFRESH]], ['true', 'SAME_SESSION']);
      assert.deepEqual([attrsOf('older')[ON], attrsOf('older')[REFRESH]], ['false', 'NO']);
      const again = (await importKeycloakRealms(ts.store, [{ ...exported, realm: 'tex2' }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(again.status, 'imported', JSON.stringify(again));
      const back = (await ts.store.clients.get('tex2', 'exchanger'))!;
      assert.deepEqual([back.standardTokenExchange, back.tokenExchangeRefresh], [true, 'SAME_SESSION']);
    });

    test('dpop.bound.access.tokens (RFC 9449) is kept and noted; export writes it back; a wrong value refuses the client', async () => {
      const DPOP = 'dpop.bound.access.tokens';
      const realm = { realm: 'dpopx', enabled: true, clients: [client('bound', { [DPOP]: 'true' }), client('free', { [DPOP]: 'false' }), client('older', {}), client('odd', { [DPOP]: 'yes' })] };
      const r = (await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal((await ts.store.clients.get('dpopx', 'bound'))!.dpopBoundAccessTokens, true);
      assert.equal((await ts.store.clients.get('dpopx', 'free'))!.dpopBoundAccessTokens, false);
      assert.equal((await ts.store.clients.get('dpopx', 'older'))!.dpopBoundAccessTokens, false);
      assert.match(JSON.stringify(r.lines.find((l) => l.element === 'client bound')), /DPoP-bound access tokens required/);
      assert.doesNotMatch(JSON.stringify(r.lines.find((l) => l.element === 'client free')), /DPoP/);
      const odd = r.lines.find((l) => l.element.startsWith('client odd'));
      assert.equal(odd?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(odd?.reason ?? '', /dpop\.bound\.access\.tokens must be "true" or "false"/);
      const exported = await exportRealm(ts.store, 'dpopx', { withSecrets: true });
      const attrsOf = (id: string): Json => ((exported.clients as Json[]).find((c) => c.clientId === id)!.attributes as Json);
      assert.equal(attrsOf('bound')[DPOP], 'true');
      assert.equal(attrsOf('free')[DPOP], 'false');
      const again = (await importKeycloakRealms(ts.store, [{ ...exported, realm: 'dpopx2' }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(again.status, 'imported', JSON.stringify(again));
      assert.equal((await ts.store.clients.get('dpopx2', 'bound'))!.dpopBoundAccessTokens, true);
    });

    test('request objects (RFC 9101): request.object.required and request.object.signature.alg kept, noted; a client-secret client keeps its keys for them; export writes them back; a wrong value refuses the client', async () => {
      const REQUIRED = 'request.object.required';
      const ALG = 'request.object.signature.alg';
      const jwks = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] });
      const realm = {
        realm: 'jarx',
        enabled: true,
        clients: [
          client('signed', { [REQUIRED]: 'request only', [ALG]: 'ES256', 'use.jwks.string': 'true', 'jwks.string': jwks }),
          client('either', { [REQUIRED]: 'request or request_uri', [ALG]: 'any' }),
          client('unsigned', { [ALG]: 'none' }),
          client('older', {}),
          client('odd', { [REQUIRED]: 'request' }),
        ],
      };
      const r = (await importKeycloakRealms(ts.store, [realm], { ifExists: 'fail' }, actor)).realms[0]!;
      const signed = (await ts.store.clients.get('jarx', 'signed'))!;
      assert.deepEqual([signed.requestObjectRequired, signed.requestObjectSignatureAlg, signed.jwtKeys?.jwksString], ['request only', 'ES256', jwks]);
      assert.ok(signed.secretHash, 'a client-secret client keeps its secret');
      const either = (await ts.store.clients.get('jarx', 'either'))!;
      assert.deepEqual([either.requestObjectRequired, either.requestObjectSignatureAlg], ['request or request_uri', null]);
      assert.equal((await ts.store.clients.get('jarx', 'unsigned'))!.requestObjectSignatureAlg, 'none');
      const older = (await ts.store.clients.get('jarx', 'older'))!;
      assert.deepEqual([older.requestObjectRequired, older.requestObjectSignatureAlg, older.jwtKeys], ['not required', null, null]);
      assert.match(JSON.stringify(r.lines.find((l) => l.element === 'client signed')), /request objects verified with its inline JWKS.*request objects required \(RFC 9101: request only\)/);
      assert.match(JSON.stringify(r.lines.find((l) => l.element === 'client unsigned')), /unsigned request objects/);
      assert.doesNotMatch(JSON.stringify(r.lines.find((l) => l.element === 'client older')), /request object/);
      const odd = r.lines.find((l) => l.element.startsWith('client odd'));
      assert.equal(odd?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(odd?.reason ?? '', /request\.object\.required must be one of/);

      const exported = await exportRealm(ts.store, 'jarx', { withSecrets: true });
      const attrsOf = (id: string): Json => ((exported.clients as Json[]).find((c) => c.clientId === id)!.attributes as Json);
      assert.deepEqual([attrsOf('signed')[REQUIRED], attrsOf('signed')[ALG]], ['request only', 'ES256']);
      assert.deepEqual([attrsOf('older')[REQUIRED], attrsOf('older')[ALG]], ['not required', 'any']);
      assert.equal(attrsOf('unsigned')[ALG], 'none');
      const again = (await importKeycloakRealms(ts.store, [{ ...exported, realm: 'jarx2' }], { ifExists: 'fail' }, actor)).realms[0]!;
      assert.equal(again.status, 'imported', JSON.stringify(again));
      const back = (await ts.store.clients.get('jarx2', 'signed'))!;
      assert.deepEqual([back.requestObjectRequired, back.requestObjectSignatureAlg, back.jwtKeys?.jwksString], ['request only', 'ES256', jwks]);
    });

    test('a switch that is not "true" or "false" refuses the client; a lifespan out of range is clamped and reported', async () => {
      const r = (await importKeycloakRealms(ts.store, [{ realm: 'parx3', enabled: true, attributes: { parRequestUriLifespan: '86400' }, clients: [client('odd', { [ATTR]: 'yes' })] }], { ifExists: 'fail' }, actor)).realms[0]!;
      const line = r.lines.find((l) => l.element.startsWith('client odd'));
      assert.equal(line?.outcome, 'skipped', JSON.stringify(r.lines));
      assert.match(line?.reason ?? '', /require\.pushed\.authorization\.requests must be "true" or "false"/);
      assert.equal(await ts.store.clients.get('parx3', 'odd'), undefined);
      assert.equal((await ts.store.realms.get('parx3'))!.parRequestUriLifespan, 3600);
      assert.match(JSON.stringify(r.lines), /parRequestUriLifespan[^"]*"[^}]*86400 is outside Realmgate's range 1-3600/);
    });
  });
}
