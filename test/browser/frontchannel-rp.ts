// Shared by the front-channel logout browser tests: relying parties as small real HTTP servers on
// loopback; each signs the browser in through the code flow (exchanging the code itself) and records every
// request to its front-channel logout URL.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { decodeJwt } from 'jose';
import type { Page } from 'playwright-core';
import { startTestServer, basic, realmPath, REALM, type TestServer } from '../helpers/server.js';
import { createClient } from '../../src/admin/operations.js';
import { SKIP_REASON, sharedBrowser, signInOnPage } from '../helpers/browser.js';

export const LOGOUT = realmPath('/protocol/openid-connect/logout');
export const STATE = 'after logout &=?';


/** A relying party: /cb redeems the code (keeping the ID token), /fc-logout is its front-channel logout URL. */
export class RelyingParty {
  readonly frontchannel: URL[] = [];
  readonly visits: URL[] = [];
  idToken: string | undefined;
  /** Never answers /fc-logout when set (the request is still recorded). */
  hang = false;
  private readonly sockets = new Set<Socket>();
  private readonly server = http.createServer((req, res) => {
    void this.handle(req, res).catch((err) => res.writeHead(500).end(String(err)));
  });

  constructor(
    readonly clientId: string,
    private readonly ts: TestServer,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  get redirectUri(): string {
    return `${this.base}/cb`;
  }
  get secret(): string {
    return `${this.clientId}-secret`;
  }
  get sid(): string {
    return decodeJwt(this.idToken!).sid as string;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    if (url.pathname === '/fc-logout') {
      this.frontchannel.push(url);
      if (!this.hang) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>signed out</title>');
      return;
    }
    this.visits.push(url);
    if (url.pathname === '/cb') {
      const r = await fetch(`${this.ts.baseUrl}${realmPath('/protocol/openid-connect/token')}`, {
        method: 'POST',
        headers: { authorization: basic(this.clientId, this.secret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: url.searchParams.get('code') ?? '', redirect_uri: this.redirectUri }).toString(),
      });
      const body = (await r.json()) as Record<string, string>;
      this.idToken = body.id_token;
      res.writeHead(r.ok ? 200 : 500, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>${this.clientId}</title><h1>Signed in to ${this.clientId}</h1>`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>${this.clientId}</title><h1>${this.clientId}: ${url.pathname}</h1>`);
  }

  async start(): Promise<void> {
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
  }
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Registers the client: front-channel logout at /fc-logout, switched on or off. */
  async register(frontchannel: boolean): Promise<void> {
    await createClient(this.ts.store, {
      realmId: REALM,
      clientId: this.clientId,
      secret: this.secret,
      redirectUris: [this.redirectUri],
      postLogoutRedirectUris: [`${this.base}/after-logout`],
      frontchannelLogout: { enabled: frontchannel, url: `${this.base}/fc-logout` },
    });
  }

  authorizeUrl(): string {
    const q = new URLSearchParams({ client_id: this.clientId, redirect_uri: this.redirectUri, response_type: 'code', scope: 'openid core_data', state: 'in' });
    return `${this.ts.baseUrl}${realmPath('/protocol/openid-connect/auth')}?${q.toString()}`;
  }
}

export interface Setup {
  ts: TestServer;
  rps: RelyingParty[];
}

export async function withServers(shared: ReturnType<typeof sharedBrowser>, t: TestContext, dialect: 'sqlite' | 'postgres', spec: Array<{ id: string; frontchannel: boolean; hang?: boolean }>, fn: (s: Setup) => Promise<void>): Promise<void> {
  if (!shared.browser) {
    t.skip(SKIP_REASON);
    return;
  }
  const ts = await startTestServer({ dialect, listen: true });
  const rps = spec.map((s) => new RelyingParty(s.id, ts));
  try {
    for (const [i, rp] of rps.entries()) {
      await rp.start();
      rp.hang = spec[i]!.hang ?? false;
      await rp.register(spec[i]!.frontchannel);
    }
    await fn({ ts, rps });
  } finally {
    for (const rp of rps) await rp.stop();
    await ts.close();
  }
}

/** Signs in to `rp` in this browser: the login form the first time, then consent and the organization. */
export async function signInTo(ts: TestServer, page: Page, rp: RelyingParty, first: boolean): Promise<void> {
  await page.goto(rp.authorizeUrl());
  if (first) await signInOnPage(page, ts.user.username, ts.user.password);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((u) => u.href.startsWith(rp.redirectUri));
  await page.getByRole('heading', { name: `Signed in to ${rp.clientId}` }).waitFor();
  assert.ok(rp.idToken, `${rp.clientId} got an ID token`);
}

export function logoutUrl(ts: TestServer, rp: RelyingParty): string {
  const q = new URLSearchParams({ id_token_hint: rp.idToken!, post_logout_redirect_uri: `${rp.base}/after-logout`, state: STATE });
  return `${ts.baseUrl}${LOGOUT}?${q.toString()}`;
}

export function checkFrontchannel(ts: TestServer, rp: RelyingParty, sid: string): void {
  assert.equal(rp.frontchannel.length, 1, `${rp.clientId}: exactly one front-channel request`);
  const q = rp.frontchannel[0]!.searchParams;
  assert.equal(q.get('iss'), `${ts.baseUrl}/auth/realms/${REALM}`, `${rp.clientId}: iss`);
  assert.equal(q.get('sid'), sid, `${rp.clientId}: sid`);
  assert.equal(q.get('sid'), rp.sid, `${rp.clientId}: the sid of the ID token it got`);
}

