/**
 * Nothing lost under crashes (issue 11, item 6): the real server (bin/realmgate.js start, the bundle:
 * `npm run build` first) is killed with SIGKILL under refresh load twenty times; after each kill a new
 * server starts on the same database and every refresh token a client holds (the last one it received
 * with a 200) must still work, or must have been rotated by the very request whose answer the kill cut
 * off (the client sent it, the server committed, the response never arrived). No half-written rows.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/db.js';
import { Store } from '../../src/storage/store.js';
import { createClient, createOrganization, createRealm, createUser } from '../../src/admin/operations.js';
import { randomToken, tokenHash } from '../../src/crypto/random.js';
import { checkChainInvariants, heldTokenState } from './invariants.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');
const REALM = 'crash';
const REDIRECT = 'https://app.example.com/cb';
const WORKERS = 12;
const KILLS = 20;

interface Server {
  child: ChildProcess;
  base: string;
  exited: Promise<void>;
}

async function startServer(url: string): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--host', '127.0.0.1'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', REALMGATE_SQLITE_SYNCHRONOUS: 'FULL', AUTH_URL: 'http://127.0.0.1:1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) return { child, base: m[1]!, exited };
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function seed(store: Store): Promise<{ secret: string; userId: string; orgId: string }> {
  await createRealm(store, { id: REALM });
  const org = await createOrganization(store, { realmId: REALM, alias: 'acme', name: 'Acme' });
  const { id: userId } = await createUser(store, { realmId: REALM, username: 'alice', password: 'correct horse battery', orgAliases: ['acme'] });
  const { secret } = await createClient(store, { realmId: REALM, clientId: 'app', redirectUris: [REDIRECT] });
  return { secret: secret!, userId, orgId: org.id };
}

for (const dialect of dialects()) {
  describe(`SIGKILL under refresh load (${dialect})`, () => {
    test(`${KILLS} kills: every token a client received still works or was rotated by the request the kill cut off`, async (t) => {
      const tdb: TestDatabase = await createTestDatabase(dialect);
      const store = new Store(tdb.db);
      const agent = new Agent({ connections: WORKERS + 2, keepAliveTimeout: 1000 });
      let server: Server | undefined;
      try {
        const { secret, userId, orgId } = await seed(store);
        const authorization = 'Basic ' + Buffer.from(`app:${encodeURIComponent(secret)}`).toString('base64');
        const tokenUrl = (s: Server): string => `${s.base}/auth/realms/${REALM}/protocol/openid-connect/token`;

        async function post(s: Server, form: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
          const res = await request(tokenUrl(s), {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
            body: new URLSearchParams(form).toString(),
          });
          const text = await res.body.text();
          return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
        }

        // A chain as the authorization endpoint would start it: a stored code, exchanged over HTTP.
        async function newChain(s: Server): Promise<string> {
          const code = randomToken();
          const now = Math.floor(Date.now() / 1000);
          await store.codes.create({
            hash: tokenHash(code), realmId: REALM, clientId: 'app', redirectUri: REDIRECT, userId, sessionId: crypto.randomUUID(),
            organizationId: orgId, scopes: ['profile', 'offline_access'], codeChallenge: null, codeChallengeMethod: null, nonce: null,
            authTime: now, createdAt: now, expiresAt: now + 45,
          });
          const r = await post(s, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
          assert.equal(r.status, 200, JSON.stringify(r.json));
          return r.json.refresh_token as string;
        }

        server = await startServer(tdb.url);
        const clients = await Promise.all(Array.from({ length: WORKERS }, async () => ({ held: await newChain(server!), inFlight: undefined as string | undefined })));
        let ok = 0;
        let cutOff = 0;
        let stillWorking = 0;

        for (let kill = 0; kill < KILLS; kill++) {
          const s: Server = server;
          let killed = false;
          const okBefore = ok;
          // Each client refreshes back to back, keeping the last token it received, until the server dies.
          const load = clients.map(async (c) => {
            while (!killed) {
              c.inFlight = c.held;
              let r;
              try {
                r = await post(s, { grant_type: 'refresh_token', refresh_token: c.held });
              } catch {
                return; // The connection died with the server: the answer is lost, inFlight stays set.
              }
              assert.equal(r.status, 200, JSON.stringify(r.json));
              c.held = r.json.refresh_token as string;
              c.inFlight = undefined;
              ok++;
            }
          });
          // Kill at a random moment once the load runs (never after a fixed time: no timing threshold).
          const killAfter = 50 + crypto.randomInt(400);
          while (ok - okBefore < killAfter) await new Promise((r) => setImmediate(r));
          s.child.kill('SIGKILL');
          killed = true;
          await s.exited;
          await Promise.all(load);

          await checkChainInvariants(tdb.db, dialect);
          server = await startServer(tdb.url);
          for (const c of clients) {
            const state = await heldTokenState(store, c.held);
            assert.ok(state !== 'missing', `kill ${kill + 1}: a token a client received with a 200 is not in the database`);
            assert.ok(state !== 'revoked', `kill ${kill + 1}: a held token's chain was revoked`);
            if (state === 'current') {
              const r = await post(server, { grant_type: 'refresh_token', refresh_token: c.held });
              assert.equal(r.status, 200, `kill ${kill + 1}: a held token no longer works: ${JSON.stringify(r.json)}`);
              c.held = r.json.refresh_token as string;
              stillWorking++;
            } else {
              // Rotated: only legitimate when this very token was in flight when the server died.
              assert.equal(c.inFlight, c.held, `kill ${kill + 1}: a held token was rotated without the client asking`);
              cutOff++;
              c.held = await newChain(server);
            }
            c.inFlight = undefined;
          }
        }
        await checkChainInvariants(tdb.db, dialect);
        if (dialect === 'sqlite') {
          const r = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(tdb.db.kysely);
          assert.deepEqual(r.rows.map((x) => x.integrity_check), ['ok']);
        }
        t.diagnostic(`${ok} refreshes answered 200 over ${KILLS} kills; after the kills ${stillWorking} held tokens still worked, ${cutOff} had been rotated by the request the kill cut off`);
        assert.ok(ok > KILLS * 50);
      } finally {
        if (server) {
          server.child.kill('SIGKILL');
          await server.exited;
        }
        await agent.close();
        await tdb.drop();
      }
    });
  });
}
