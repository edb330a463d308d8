// Debian's libapache2-mod-auth-openidc as an independent relying party (test/e2e/mod-auth-openidc*.test.ts):
// Apache with the guide's configuration (examples/apache/auth-openidc.conf) in a temporary directory.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { REALM, type TestServer } from './server.js';

export const APACHE = '/usr/sbin/apache2';
export const MODULES = '/usr/lib/apache2/modules';
export const available = fs.existsSync(APACHE) && fs.existsSync(path.join(MODULES, 'mod_auth_openidc.so'));
export const SKIP = 'apache2 and libapache2-mod-auth-openidc are not installed (.ci/run installs them)';
export const EXAMPLE = path.resolve('examples/apache/auth-openidc.conf');

export interface Apache {
  base: string;
  stop(): Promise<void>;
  log(): string;
}

export async function startApache(ts: TestServer, client: { id: string; secret: string }, port: number, extraConf = ''): Promise<Apache> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-apache-'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'www', 'protected'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'www', 'protected', 'index.html'), 'the protected page\n');
  const base = `http://127.0.0.1:${port}`;
  const conf = `ServerRoot ${dir}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn auth_openidc:info
User www-data
Group www-data
LoadModule mpm_event_module ${MODULES}/mod_mpm_event.so
LoadModule authn_core_module ${MODULES}/mod_authn_core.so
LoadModule authz_core_module ${MODULES}/mod_authz_core.so
LoadModule authz_user_module ${MODULES}/mod_authz_user.so
LoadModule auth_openidc_module ${MODULES}/mod_auth_openidc.so
DocumentRoot ${dir}/www
# The guide's configuration (docs/guide-web-app.md), as it is, with its environment below.
Include ${EXAMPLE}
# For the test only: what the module holds, at ${base}/protected/redirect_uri?info=json.
OIDCInfoHook iat access_token access_token_expires id_token userinfo refresh_token session
${extraConf}`;
  fs.writeFileSync(path.join(dir, 'httpd.conf'), conf);
  const env = { ...process.env, ISSUER: `${ts.baseUrl}/auth/realms/${REALM}`, CLIENT_ID: client.id, CLIENT_SECRET: client.secret, APP_URL: base, OIDC_PASSPHRASE: randomBytes(24).toString('base64url') };
  const child: ChildProcess = spawn(APACHE, ['-X', '-f', path.join(dir, 'httpd.conf')], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const log = (): string => output + (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  // Ready when it answers (an unprotected path: 404).
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`apache2 exited: ${log()}`);
    const ok = await fetch(`${base}/ready`).then(() => true, () => false);
    if (ok) break;
    if (i > 100) throw new Error(`apache2 did not start: ${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    log,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
