import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import type { Store } from '../../src/storage/store.js';
import { createClient, createOrganization, createRealm, createUser } from '../../src/admin/operations.js';
import { randomToken, tokenHash } from '../../src/crypto/random.js';

/** The installed command (the bundle: `npm run build` first, as for the CLI tests). */
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/realmgate.js');
export const REALM = 'crash';
const REDIRECT = 'https://app.example.com/cb';

/** A real server process (`realmgate start`) on a free port of 127.0.0.1. */
export interface ServerProcess {
  child: ChildProcess;
  base: string;
  exited: Promise<void>;
}

export async function startServerProcess(url: string, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<ServerProcess & { output(): string }> {
  const child = spawn(process.execPath, [BIN, 'start', '--port', '0', '--host', '127.0.0.1', ...args], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', REALMGATE_SQLITE_SYNCHRONOUS: 'FULL', AUTH_URL: 'http://127.0.0.1:1', REALMGATE_CACHE_TTL_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) return { child, base: m[1]!, exited, output: () => out };
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Until the server's output matches `re`, at most 10 s: a line the server logged while answering reaches
 * the test through a pipe, possibly after the answer itself.
 */
export async function outputMatches(s: { output(): string }, re: RegExp): Promise<void> {
  for (let tries = 0; !re.test(s.output()); tries++) {
    assert.ok(tries < 1000, `the server's output never matched ${re}:\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function killServerProcess(s: ServerProcess): Promise<void> {
  s.child.kill('SIGKILL');
  await s.exited;
}

/** A realm, user and confidential client, and how to talk to the token endpoint of any server process. */
export interface TokenClient {
  /** The client's HTTP Basic credentials (the Authorization header's value). */
  authorization: string;
  post(s: ServerProcess, form: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }>;
  /** A chain as the authorization endpoint would start it: a stored code, exchanged over HTTP. */
  newChain(s: ServerProcess): Promise<string>;
  close(): Promise<void>;
}

export async function seedTokenClient(store: Store, connections: number): Promise<TokenClient> {
  await createRealm(store, { id: REALM });
  const org = await createOrganization(store, { realmId: REALM, alias: 'acme', name: 'Acme' });
  const { id: userId } = await createUser(store, { realmId: REALM, username: 'alice', password: 'correct horse battery', orgAliases: ['acme'] });
  const { secret } = await createClient(store, { realmId: REALM, clientId: 'app', redirectUris: [REDIRECT] });
  const authorization = 'Basic ' + Buffer.from(`app:${encodeURIComponent(secret!)}`).toString('base64');
  const agent = new Agent({ connections, keepAliveTimeout: 1000 });

  async function post(s: ServerProcess, form: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await request(`${s.base}/auth/realms/${REALM}/protocol/openid-connect/token`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
      body: new URLSearchParams(form).toString(),
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  return {
    authorization,
    post,
    async newChain(s) {
      const code = randomToken();
      const now = Math.floor(Date.now() / 1000);
      await store.codes.create({
        hash: tokenHash(code), realmId: REALM, clientId: 'app', redirectUri: REDIRECT, userId, sessionId: crypto.randomUUID(),
        organizationId: org.id, scopes: ['profile', 'offline_access'], codeChallenge: null, codeChallengeMethod: null, nonce: null,
        authTime: now, createdAt: now, expiresAt: now + 45,
      });
      const r = await post(s, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.refresh_token as string;
    },
    close: () => agent.close(),
  };
}
