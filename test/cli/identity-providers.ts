import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { BIN, cliRunner, type CliResult } from '../helpers/cli.js';
import { dialects } from '../helpers/db.js';
import { REALM, startTestServer, type TestServer } from '../helpers/server.js';
import { FetchCookieJar, followRedirects } from '../helpers/fetch-browser.js';
import { pageKind } from '../helpers/flow.js';
import { startUpstream, type Upstream } from '../helpers/upstream-provider.js';
import { updateRealm } from '../../src/admin/operations.js';
import { providerSecret, SECRET_MASK } from '../../src/admin/operations/identity-providers.js';

// The identity-provider and user federated-identity commands of the installed command (npm run build
// first), over the database of a running server, against node-oidc-provider over real HTTP: a provider
// created from its issuer (OpenID Connect Discovery) signs a new user in at once, and the link shows.

for (const dialect of dialects()) {
  describe(`realmgate identity-provider and user federated-identity commands (${dialect})`, () => {
    const { run, ok, fails } = cliRunner(() => ts.db.url);
    let ts: TestServer;
    let up: Upstream;
    const saved = { authUrl: process.env.AUTH_URL, keySecret: process.env.REALMGATE_KEY_SECRET };
    const callback = (alias: string): string => `${ts.baseUrl}/auth/realms/${REALM}/broker/${alias}/endpoint`;
    /** Every output of the commands, to check that no secret is ever printed. */
    const printed: string[] = [];
    const okIn = (args: string[], input?: string): string => {
      const out = ok(args, input);
      printed.push(out);
      return out;
    };
    /** A refusal of a command that reads a secret first: non-zero exit, the reason in one line, no stack trace. */
    const refused = (args: string[], input: string, message: RegExp): void => {
      const r = run(args, input);
      printed.push(r.stdout, r.stderr);
      assert.notEqual(r.status, 0, `expected failure: ${args.join(' ')}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').filter((l) => !l.startsWith('realmgate: database ')).length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at\s/);
    };

    /**
     * A command that reaches the provider (discovery), which is served by this process: run without
     * blocking it (cliRunner's spawnSync would, and the discovery request would wait for ever).
     */
    const runAsync = (args: string[], input = ''): Promise<CliResult> =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: ts.db.url, LOG_LEVEL: 'silent' } });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('error', reject);
        child.on('close', (status) => {
          printed.push(stdout, stderr);
          resolve({ status, stdout, stderr });
        });
        child.stdin.end(input);
      });

    before(async () => {
      // The server and the commands seal the provider's secret under one key-encryption secret.
      process.env.REALMGATE_KEY_SECRET = 'identity provider commands test secret';
      ts = await startTestServer({ dialect, listen: true });
      // The commands print the redirect URI from AUTH_URL, as the server has it.
      process.env.AUTH_URL = ts.baseUrl;
      await updateRealm(ts.store, { realmId: REALM, settings: { organizationRequired: false } });
      up = await startUpstream({ redirectUri: callback('corp') });
    });
    after(async () => {
      await up.close();
      await ts.close();
      for (const [name, value] of [['AUTH_URL', saved.authUrl], ['REALMGATE_KEY_SECRET', saved.keySecret]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    /** Follows redirects as a browser does, across Realmgate and the provider, until a page. */
    const follow = (jar: FetchCookieJar, url: URL): Promise<{ url: URL; res: Response }> => followRedirects(jar, url);

    test('create --issuer discovers the endpoints, prints the redirect URI; a sign-in through the provider links a new user', async () => {
      const created = await runAsync(['identity-provider', 'create', REALM, 'corp', '--issuer', up.issuer, '--client-id', up.clientId, '--client-secret-stdin', '--display-name', 'Corp SSO'], `${up.clientSecret}\n`);
      assert.equal(created.status, 0, created.stderr);
      const out = created.stdout;
      assert.match(out, /^created identity provider corp in realm test; register its redirect URI at the provider$/m);
      assert.ok(out.includes(`\nredirect URI:        ${callback('corp')}\n`), out);
      assert.ok(out.includes(`\nauthorization URL:   ${up.issuer}/auth\n`), out);
      assert.ok(out.includes(`\nJWKS URL:            ${up.issuer}/jwks\n`), out);
      assert.match(out, /^ID token signature: +checked \(JWKS URL\)$/m);
      assert.match(out, /^PKCE: +S256$/m);
      assert.match(out, /^scope: +openid email profile$/m);
      assert.match(out, /^client secret: +set \(not shown\)$/m);
      const stored = (await ts.store.identityProviders.get(REALM, 'corp'))!;
      assert.equal(stored.config.issuer, up.issuer);
      assert.equal(stored.config.tokenUrl, `${up.issuer}/token`);
      assert.equal(stored.config.userInfoUrl, `${up.issuer}/me`);
      assert.deepEqual([stored.config.validateSignature, stored.config.useJwksUrl, stored.config.pkceEnabled, stored.config.pkceMethod], ['true', 'true', 'true', 'S256']);
      assert.equal(await providerSecret(ts.store, stored), up.clientSecret);
      assert.ok((await ts.store.adminEvents.list(REALM, {})).some((e) => e.via === 'cli' && e.operation === 'CREATE' && e.resourcePath === 'identity-provider/instances/corp'));

      // The login page offers it; kc_idp_hint goes there with PKCE, and back: a new user, linked.
      const authorize = (extra: Record<string, string> = {}): URL =>
        new URL(`/auth/realms/${REALM}/protocol/openid-connect/auth?${new URLSearchParams({ client_id: ts.client.id, redirect_uri: ts.client.redirectUri, response_type: 'code', scope: 'openid', state: 's1', ...extra })}`, ts.baseUrl);
      const login = await follow(new FetchCookieJar(), authorize());
      assert.match(await login.res.text(), /Corp SSO/);
      up.nextAccount = { sub: 'ext-1', email: 'bo@corp.example', preferred_username: 'bo.corp' };
      const landed = await follow(new FetchCookieJar(), authorize({ kc_idp_hint: 'corp' }));
      assert.equal(pageKind(await landed.res.text()), 'consent');
      const asked = up.requests.at(-1)!;
      assert.equal(asked.get('redirect_uri'), callback('corp'));
      assert.equal(asked.get('code_challenge_method'), 'S256');
      assert.equal(asked.get('scope'), 'openid email profile');
      const links = okIn(['user', 'federated-identity', 'list', REALM, 'bo.corp']);
      assert.match(links, /^corp\text-1\tbo\.corp\t\d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    });

    test('list, show, update, disable, enable and delete; the secret is never printed', async () => {
      assert.equal(okIn(['identity-provider', 'list', REALM]), `corp\tCorp SSO\tenabled\t${up.issuer}\t${callback('corp')}\n`);
      const json = JSON.parse(okIn(['identity-provider', 'show', REALM, 'corp', '--json'])) as { alias: string; config: Record<string, string> };
      assert.equal(json.alias, 'corp');
      assert.equal(json.config.clientSecret, SECRET_MASK);
      const listed = JSON.parse(okIn(['identity-provider', 'list', REALM, '--json'])) as Array<{ alias: string; config: Record<string, string> }>;
      assert.deepEqual(listed.map((p) => [p.alias, p.config.clientSecret]), [['corp', SECRET_MASK]]);

      // What is not given stays, the secret included.
      let out = okIn(['identity-provider', 'update', REALM, 'corp', '--display-name', 'Corp <b>SSO</b>', '--trust-email', 'on', '--hide-on-login', 'on', '--scope', 'openid email', '--client-auth-method', 'client_secret_basic', '--sync-mode', 'FORCE', '--config', 'loginHint=true']);
      assert.match(out, /^updated identity provider corp in realm test$/m);
      for (const line of [/^display name: +Corp <b>SSO<\/b>$/m, /^trust email: +yes$/m, /^login page: +hidden/m, /^scope: +openid email$/m, /^client auth: +client_secret_basic$/m, /^sync mode: +FORCE$/m, /^other config: +loginHint=true$/m, /^PKCE: +S256$/m]) assert.match(out, line);
      let stored = (await ts.store.identityProviders.get(REALM, 'corp'))!;
      assert.equal(await providerSecret(ts.store, stored), up.clientSecret);
      assert.deepEqual([stored.hideOnLogin, stored.trustEmail], [true, true]);
      assert.equal(okIn(['identity-provider', 'list', REALM]), `corp\tCorp <b>SSO</b>\tenabled,hidden\t${up.issuer}\t${callback('corp')}\n`);

      // A new secret from standard input; PKCE off; the display name removed.
      out = okIn(['identity-provider', 'update', REALM, 'corp', '--client-secret-stdin', '--pkce', 'off', '--display-name', ''], 'a new secret\n');
      assert.match(out, /^PKCE: +off$/m);
      assert.match(out, /^display name:$/m);
      stored = (await ts.store.identityProviders.get(REALM, 'corp'))!;
      assert.equal(await providerSecret(ts.store, stored), 'a new secret');
      assert.equal(stored.config.pkceEnabled, 'false');
      okIn(['identity-provider', 'update', REALM, 'corp', '--client-secret-stdin', '--pkce', 'on', '--hide-on-login', 'off'], up.clientSecret);

      okIn(['identity-provider', 'disable', REALM, 'corp']);
      assert.match(okIn(['identity-provider', 'list', REALM]), /^corp\t\tdisabled\t/);
      okIn(['identity-provider', 'enable', REALM, 'corp']);
      assert.match(okIn(['identity-provider', 'show', REALM, 'corp']), /^state: +enabled$/m);

      // Endpoints one by one, without discovery; PKCE off; of an organization; link-only and disabled.
      out = okIn(
        [
          'identity-provider', 'create', REALM, 'manual', '--issuer', 'https://login.example.com', '--no-discovery',
          '--authorization-url', 'https://login.example.com/authorize', '--token-url', 'https://login.example.com/token', '--jwks-url', 'https://login.example.com/keys',
          '--client-id', 'rg', '--client-secret-stdin', '--no-pkce', '--organization', 'acme', '--link-only', '--disabled', '--scope', 'openid',
        ],
        'manual secret',
      );
      for (const line of [/^issuer: +https:\/\/login\.example\.com$/m, /^userinfo URL:$/m, /^ID token signature: +checked/m, /^PKCE: +off$/m, /^organization: +acme$/m, /^link only: +yes$/m, /^state: +disabled$/m]) assert.match(out, line);
      const manual = (await ts.store.identityProviders.get(REALM, 'manual'))!;
      assert.equal(manual.organizationId, (await ts.store.organizations.findByAlias(REALM, 'acme'))!.id);
      out = okIn(['identity-provider', 'update', REALM, 'manual', '--no-organization', '--jwks-url', '']);
      assert.match(out, /^organization:$/m);
      assert.match(out, /^ID token signature: +not checked/m);
      assert.match(okIn(['identity-provider', 'list', REALM]), /^manual\t\tdisabled,link-only\thttps:\/\/login\.example\.com\t/m);

      // Deleting asks for --yes; the provider's links go with it.
      await ts.store.identityProviders.link({ realmId: REALM, identityProvider: 'manual', federatedUserId: 'm-1', federatedUsername: null, userId: ts.user.id, createdAt: 1 });
      fails(['identity-provider', 'delete', REALM, 'manual'], /cannot be undone: add --yes/, { status: 1 });
      assert.match(okIn(['identity-provider', 'delete', REALM, 'manual', '--yes']), /^deleted identity provider manual from realm test$/m);
      assert.doesNotMatch(okIn(['identity-provider', 'list', REALM]), /manual/);
      assert.deepEqual(await ts.store.identityProviders.links(ts.user.id), []);
      fails(['identity-provider', 'show', REALM, 'manual'], /identity provider manual does not exist in realm test/, { status: 1 });

      for (const text of printed) for (const secret of [up.clientSecret, 'a new secret', 'manual secret']) assert.ok(!text.includes(secret), `a secret was printed: ${text}`);
    });

    test('user federated-identity link, list and unlink', async () => {
      okIn(['user', 'create', REALM, 'carol', '--password', 'carol password 42']);
      const out = okIn(['user', 'federated-identity', 'link', REALM, 'carol', '--provider', 'corp', '--provider-user-id', 'ext-7', '--provider-username', 'carol@corp']);
      assert.equal(out, 'linked carol to the corp account ext-7 in realm test\n');
      assert.match(okIn(['user', 'federated-identity', 'list', REALM, 'carol']), /^corp\text-7\tcarol@corp\t\d{4}-/);
      const line = JSON.parse(okIn(['user', 'federated-identity', 'list', REALM, 'carol', '--json'])) as Record<string, string>;
      assert.deepEqual({ ...line, created: undefined }, { identityProvider: 'corp', userId: 'ext-7', userName: 'carol@corp', created: undefined });
      const carol = (await ts.store.users.findByUsername(REALM, 'carol'))!;
      const events = (await ts.store.adminEvents.list(REALM, {})).filter((e) => e.via === 'cli').map((e) => `${e.operation} ${e.resourcePath}`);
      assert.ok(events.includes(`CREATE users/${carol.id}/federated-identity/corp`), events.join('\n'));

      // The account is carol's: nobody else's; carol has a corp account already.
      fails(['user', 'federated-identity', 'link', REALM, 'alice', '--provider', 'corp', '--provider-user-id', 'ext-7'], /linked already/, { status: 1 });
      fails(['user', 'federated-identity', 'link', REALM, 'carol', '--provider', 'corp', '--provider-user-id', 'ext-8'], /linked already/, { status: 1 });
      fails(['user', 'federated-identity', 'link', REALM, 'carol', '--provider', 'nope', '--provider-user-id', 'x'], /identity provider nope does not exist in realm test/, { status: 1 });
      fails(['user', 'federated-identity', 'link', REALM, 'nobody', '--provider', 'corp', '--provider-user-id', 'x'], /nobody/, { status: 1 });
      fails(['user', 'federated-identity', 'link', REALM, 'carol', '--provider', 'corp'], /--provider-user-id/, { status: 1 });

      assert.equal(okIn(['user', 'federated-identity', 'unlink', REALM, carol.id, '--provider', 'corp']), 'unlinked carol from corp in realm test\n');
      assert.equal(okIn(['user', 'federated-identity', 'list', REALM, 'carol']), '');
      fails(['user', 'federated-identity', 'unlink', REALM, 'carol', '--provider', 'corp'], /user carol has no link to identity provider corp/, { status: 1 });
      assert.ok((await ts.store.adminEvents.list(REALM, {})).some((e) => e.via === 'cli' && e.operation === 'DELETE' && e.resourcePath === `users/${carol.id}/federated-identity/corp`));
    });

    test('--type google: Google\'s endpoints and checks from the client id and secret alone; --hosted-domain is sent as hd', async () => {
      const created = okIn(['identity-provider', 'create', REALM, 'google', '--type', 'google', '--client-id', 'rg.apps.googleusercontent.com', '--client-secret-stdin', '--hosted-domain', 'corp.example'], 'g-secret\n');
      assert.match(created, /^type: {16}google$/m);
      assert.match(created, /^display name:\s*$/m);
      assert.match(created, /^issuer: {14}https:\/\/accounts\.google\.com$/m);
      assert.match(created, /^authorization URL: {3}https:\/\/accounts\.google\.com\/o\/oauth2\/v2\/auth$/m);
      assert.match(created, /^JWKS URL: {12}https:\/\/www\.googleapis\.com\/oauth2\/v3\/certs$/m);
      assert.match(created, /^ID token signature: {2}checked/m);
      assert.match(created, /^hosted domains: {6}corp\.example$/m);
      assert.doesNotMatch(created, /g-secret/);
      const p = (await ts.store.identityProviders.get(REALM, 'google'))!;
      assert.equal(p.providerId, 'google');
      assert.equal(await providerSecret(ts.store, p), 'g-secret');
      okIn(['identity-provider', 'update', REALM, 'google', '--hosted-domain', '']);
      assert.match(okIn(['identity-provider', 'show', REALM, 'google']), /^hosted domains: {6}any account$/m);
      okIn(['identity-provider', 'delete', REALM, 'google', '--yes']);
      fails(['identity-provider', 'create', REALM, 'gh', '--type', 'twitter', '--client-id', 'x', '--client-secret-stdin'], /--type takes oidc, keycloak-oidc, google, github, gitlab, microsoft, facebook, linkedin-openid-connect, bitbucket, not "twitter"/, { status: 1 });
      fails(['identity-provider', 'create', REALM, 'x', '--issuer', up.issuer, '--client-id', 'x', '--client-secret-stdin', '--hosted-domain', 'corp.example'], /--hosted-domain goes with --type google/, { status: 1 });
      assert.equal(await ts.store.identityProviders.get(REALM, 'gh'), undefined);
    });

    test("--type microsoft with --config tenantId: the tenant's endpoints, Graph's profile, User.read; no ID token; a bad tenant refused", async () => {
      const created = okIn(['identity-provider', 'create', REALM, 'entra', '--type', 'microsoft', '--client-id', '00000000-aaaa-4bbb-8ccc-000000000001', '--client-secret-stdin', '--config', 'tenantId=contoso.onmicrosoft.com'], 'ms-secret\n');
      assert.match(created, /^type: {16}microsoft$/m);
      assert.match(created, /^authorization URL: {3}https:\/\/login\.microsoftonline\.com\/contoso\.onmicrosoft\.com\/oauth2\/v2\.0\/authorize$/m);
      assert.match(created, /^token URL: {11}https:\/\/login\.microsoftonline\.com\/contoso\.onmicrosoft\.com\/oauth2\/v2\.0\/token$/m);
      assert.match(created, /^userinfo URL: {8}https:\/\/graph\.microsoft\.com\/v1\.0\/me\/$/m);
      assert.match(created, /^ID token signature: {2}none \(Microsoft has no ID tokens/m);
      assert.match(created, /^scope: {15}User\.read$/m);
      assert.match(created, /^tenant: {14}contoso\.onmicrosoft\.com$/m);
      assert.doesNotMatch(created, /^other config:.*tenantId/m);
      // Another tenant: the endpoints follow it.
      const moved = okIn(['identity-provider', 'update', REALM, 'entra', '--config', 'tenantId=organizations']);
      assert.match(moved, /^authorization URL: {3}https:\/\/login\.microsoftonline\.com\/organizations\/oauth2\/v2\.0\/authorize$/m);
      refused(['identity-provider', 'update', REALM, 'entra', '--config', 'tenantId=../evil'], '', /config\.tenantId must be a tenant id/);
      assert.equal((await ts.store.identityProviders.get(REALM, 'entra'))!.config.tenantId, 'organizations');
      okIn(['identity-provider', 'delete', REALM, 'entra', '--yes']);
      // A self-managed GitLab: --type gitlab with its --issuer; its discovered endpoints kept, GitLab's scope.
      // (runAsync: the discovery is answered by the upstream provider of this process.)
      const made = await runAsync(['identity-provider', 'create', REALM, 'gitlab', '--type', 'gitlab', '--issuer', up.issuer, '--client-id', 'gl-app', '--client-secret-stdin'], 'gl-secret\n');
      assert.equal(made.status, 0, made.stderr);
      const gl = made.stdout;
      assert.match(gl, new RegExp(`^authorization URL: {3}${up.issuer.replace(/[.]/g, '\\.')}/auth$`, 'm'));
      assert.match(gl, /^scope: {15}openid read_user$/m);
      assert.match(gl, /^ID token signature: {2}checked/m);
      okIn(['identity-provider', 'delete', REALM, 'gitlab', '--yes']);
    });

    test('wrong input is refused in one line, nothing stored', async () => {
      const base = ['--client-id', 'rg', '--client-secret-stdin'];
      const endpoints = ['--authorization-url', 'https://x.example/a', '--token-url', 'https://x.example/t'];
      fails(['identity-provider', 'list', 'nope'], /realm nope does not exist/, { status: 1 });
      fails(['identity-provider', 'create', REALM, 'x', ...base], /give the provider's --issuer .* or its --authorization-url and --token-url/, { status: 1 });
      fails(['identity-provider', 'create', REALM, 'x', ...endpoints, '--client-secret-stdin'], /--client-id is required/, { status: 1 });
      fails(['identity-provider', 'create', REALM, 'x', ...endpoints, '--client-id', 'rg'], /--client-secret-stdin is required/, { status: 1 });
      fails(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base], /--client-secret-stdin read an empty secret/, { status: 1 });
      refused(['identity-provider', 'create', REALM, 'bad/alias', ...endpoints, ...base], 's', /alias must be 1 to 255 letters/);
      refused(['identity-provider', 'create', REALM, 'corp', ...endpoints, ...base], 's', /identity provider corp already exists in realm test/);
      refused(['identity-provider', 'create', 'nope', 'x', ...endpoints, ...base], 's', /realm nope does not exist/);
      refused(['identity-provider', 'create', REALM, 'x', '--authorization-url', 'http://x.example/a', '--token-url', 'https://x.example/t', ...base], 's', /config\.authorizationUrl must be an https URL/);
      refused(['identity-provider', 'create', REALM, 'x', '--issuer', 'http://idp.example.com', ...base], 's', /config\.issuer must be an https URL/);
      refused(['identity-provider', 'create', REALM, 'x', '--issuer', 'http://127.0.0.1:9', ...base], 's', /could not read http:\/\/127\.0\.0\.1:9\/\.well-known\/openid-configuration/);
      const mismatch = await runAsync(['identity-provider', 'create', REALM, 'x', '--issuer', `${up.issuer}/`, ...base], 's');
      assert.equal(mismatch.status, 1);
      assert.match(mismatch.stderr, /realmgate: http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration names the issuer "http:\/\/127\.0\.0\.1:\d+", not "http:\/\/127\.0\.0\.1:\d+\/" \(OpenID Connect Discovery 4\.3\)\n$/);
      refused(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base, '--client-auth-method', 'private_key_jwt'], 's', /clientAuthMethod "private_key_jwt" is not supported/);
      refused(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base, '--sync-mode', 'LEGACY'], 's', /--sync-mode takes IMPORT or FORCE/);
      refused(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base, '--organization', 'nope'], 's', /organization nope does not exist/);
      refused(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base, '--config', 'clientSecret=oops'], 's', /--client-secret-stdin, never from the command line/);
      refused(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base, '--config', 'novalue'], 's', /--config takes key=value/);
      fails(['identity-provider', 'create', REALM, 'x', ...endpoints, ...base, '--no-discovery'], /--no-discovery goes with --issuer/, { status: 1 });
      fails(['identity-provider', 'update', REALM, 'corp', '--enabled', '--disabled'], /either --enabled or --disabled/, { status: 1 });
      fails(['identity-provider', 'update', REALM, 'corp', '--pkce', 'maybe'], /--pkce takes on or off/);
      fails(['identity-provider', 'update', REALM, 'nope', '--display-name', 'N'], /identity provider nope does not exist in realm test/, { status: 1 });
      fails(['identity-provider', 'update', REALM, 'corp', '--token-url', 'ftp://x.example/t'], /config\.tokenUrl must be an https URL/, { status: 1 });
      fails(['identity-provider', 'disable', REALM, 'nope'], /identity provider nope does not exist/, { status: 1 });
      fails(['identity-provider', 'delete', REALM, 'nope', '--yes'], /identity provider nope does not exist/, { status: 1 });
      assert.deepEqual((await ts.store.identityProviders.list(REALM)).map((p) => p.alias), ['corp']);
      assert.equal((await ts.store.identityProviders.get(REALM, 'corp'))!.config.tokenUrl, `${up.issuer}/token`);
    });

    test('identity-provider mapper add, list and remove', () => {
      okIn(['role', 'create', REALM, 'partner']);
      okIn(['identity-provider', 'create', REALM, 'mapped', '--issuer', 'https://mapped.example', '--no-discovery', '--authorization-url', 'https://mapped.example/auth', '--token-url', 'https://mapped.example/token', '--client-id', 'c', '--client-secret-stdin'], 'mapped secret\n');
      const added = okIn(['identity-provider', 'mapper', 'add', REALM, 'mapped', 'partner role', '--type', 'oidc-hardcoded-role-idp-mapper', '--config', 'role=partner', '--sync-mode', 'FORCE']);
      assert.match(added, /^added mapper partner role \(oidc-hardcoded-role-idp-mapper, id [0-9a-f-]{36}\) to identity provider mapped/);
      okIn(['identity-provider', 'mapper', 'add', REALM, 'mapped', 'dept', '--type', 'oidc-user-attribute-idp-mapper', '--config', 'claim=org.dept', '--config', 'user.attribute=department']);
      assert.equal(okIn(['identity-provider', 'mapper', 'list', REALM, 'mapped']), 'dept\toidc-user-attribute-idp-mapper\tLEGACY\tclaim=org.dept user.attribute=department\npartner role\toidc-hardcoded-role-idp-mapper\tFORCE\trole=partner\n');
      const json = JSON.parse(okIn(['identity-provider', 'mapper', 'list', REALM, 'mapped', '--json'])) as Array<{ name: string; identityProviderAlias: string; config: Record<string, string> }>;
      assert.deepEqual(json.map((m) => [m.name, m.identityProviderAlias, m.config.syncMode]), [['dept', 'mapped', undefined], ['partner role', 'mapped', 'FORCE']]);
      fails(['identity-provider', 'mapper', 'add', REALM, 'mapped', 'x', '--type', 'oidc-hardcoded-role-idp-mapper', '--config', 'role=nope'], /no role "nope"/, { status: 1 });
      fails(['identity-provider', 'mapper', 'add', REALM, 'mapped', 'x', '--type', 'saml-role-idp-mapper'], /not supported/, { status: 1 });
      fails(['identity-provider', 'mapper', 'add', REALM, 'mapped', 'dept', '--type', 'oidc-hardcoded-role-idp-mapper', '--config', 'role=partner'], /has a mapper named dept already/, { status: 1 });
      assert.match(okIn(['identity-provider', 'mapper', 'remove', REALM, 'mapped', 'partner role']), /^removed mapper partner role/);
      fails(['identity-provider', 'mapper', 'remove', REALM, 'mapped', 'partner role'], /no mapper "partner role"/, { status: 1 });
      assert.equal(okIn(['identity-provider', 'mapper', 'list', REALM, 'mapped']).split('\n')[0]!.split('\t')[0], 'dept');
      assert.match(okIn(['identity-provider', 'mapper', '--help']), /add(.*\n)*.*list(.*\n)*.*remove/);
    });

    test('--help describes the commands', () => {
      assert.match(ok(['identity-provider', '--help']), /create(.*\n)*.*update(.*\n)*.*list(.*\n)*.*show(.*\n)*.*enable(.*\n)*.*disable(.*\n)*.*delete/);
      const create = ok(['identity-provider', 'create', '--help']);
      for (const option of ['--issuer <url>', '--authorization-url <url>', '--token-url <url>', '--client-id <id>', '--client-secret-stdin', '--no-pkce', '--trust-email', '--hide-on-login', '--link-only', '--organization <org>', '--sync-mode <mode>']) {
        assert.ok(create.includes(option), option);
      }
      assert.match(ok(['user', 'federated-identity', '--help']), /list(.*\n)*.*link(.*\n)*.*unlink/);
      assert.match(ok(['user', 'federated-identity', 'link', '--help']), /--provider <alias>(.*\n)*.*--provider-user-id <id>(.*\n)*.*--provider-username <name>/);
    });
  });
}
