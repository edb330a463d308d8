// Shared by the browser tests: Debian's chromium driven by playwright-core (never a downloaded browser).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { dialects } from './db.js';

export const CHROMIUM = '/usr/bin/chromium';
export const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'];
export const SKIP_REASON = `${CHROMIUM} is not installed (apt-get install chromium); browser tests need it and never download a browser`;

export const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
export const SCREENSHOT_DIR = path.resolve('docs/screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const CLIENT_ORIGIN = 'https://app.example.com';

/**
 * One chromium for a test file: launched before its tests, closed after them; `browser` is undefined
 * when chromium is not installed (the tests then skip with SKIP_REASON). `newContext` is a fresh profile
 * (no cookies) at desktop size, with short timeouts so that a broken page fails fast.
 */
export function sharedBrowser(): { readonly browser: Browser | undefined; newContext(opts?: { locale?: string }): Promise<BrowserContext> } {
  let browser: Browser | undefined;
  before(async () => {
    // The PostgreSQL half of a split file without TEST_DATABASE_URL has no tests: a chromium launched for
    // none was never closed (node:test runs no `after` then), and the file ran into its 120 s limit.
    if (dialects().length === 0) return;
    if (fs.existsSync(CHROMIUM)) browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  });
  after(async () => {
    await browser?.close();
  });
  return {
    get browser() {
      return browser;
    },
    async newContext(opts = {}) {
      // `locale`: the browser's language (its Accept-Language); American English unless asked.
      const context = await browser!.newContext({ viewport: DESKTOP, locale: opts.locale ?? 'en-US' });
      context.setDefaultTimeout(10_000);
      context.setDefaultNavigationTimeout(15_000);
      return context;
    },
  };
}

/**
 * The client's redirect URI is on a host that does not exist: answer it with a tiny page, and record
 * every document URL the browser was sent to there.
 *
 * Not `page.route`: Playwright calls route handlers only for the first URL of a navigation, never for
 * the target of a redirect ("The handler will only be called for the first url if the response is a
 * redirect"), so a GET to the authorization endpoint answered with a 303 to the client (the SSO case)
 * would fail with ERR_NAME_NOT_RESOLVED. Chromium's own Fetch domain pauses redirect targets too.
 */
export async function interceptClient(context: BrowserContext, page: Page): Promise<string[]> {
  const hits: string[] = [];
  const cdp = await context.newCDPSession(page);
  cdp.on('Fetch.requestPaused', (event) => {
    const isDocument = event.resourceType === 'Document';
    if (isDocument) hits.push(event.request.url);
    const body = isDocument ? '<!doctype html><html lang="en"><title>Web App</title><p>Back at the application.</p></html>' : 'not found';
    cdp
      .send('Fetch.fulfillRequest', {
        requestId: event.requestId,
        responseCode: isDocument ? 200 : 404,
        responseHeaders: [{ name: 'content-type', value: isDocument ? 'text/html; charset=utf-8' : 'text/plain' }],
        body: Buffer.from(body).toString('base64'),
      })
      .catch(() => undefined); // the page may be gone already
  });
  await cdp.send('Fetch.enable', { patterns: [{ urlPattern: `${CLIENT_ORIGIN}/*`, requestStage: 'Request' }] });
  return hits;
}

/** Checks the stylesheet applies and nothing scrolls sideways at desktop and phone width; saves screenshots on request. */
export async function checkLayout(page: Page, name: string, shoot: boolean): Promise<void> {
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(243, 245, 248)', `${name}: the stylesheet is not applied`);
  const original = page.viewportSize() ?? DESKTOP;
  try {
    for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      await page.setViewportSize(size);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${name} at ${label} width scrolls sideways by ${overflow}px`);
      if (shoot && UPDATE_SCREENSHOTS) {
        fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${label}.png`), fullPage: true, animations: 'disabled', caret: 'hide' });
      }
    }
  } finally {
    await page.setViewportSize(original);
  }
}

export async function heading(page: Page): Promise<string> {
  return ((await page.getByRole('heading', { level: 1 }).textContent()) ?? '').trim();
}

/** The authorization request of the test server's confidential client (scope openid core_data). */
export function authorizeUrl(ts: { baseUrl: string; client: { id: string; redirectUri: string } }, state: string): string {
  const q = new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid core_data', state });
  return `${ts.baseUrl}/auth/realms/test/protocol/openid-connect/auth?${q.toString()}`;
}

/** Fills and sends the login page. */
export async function signInOnPage(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
