// A real LDAP directory for the user federation tests: Debian's OpenLDAP (slapd, ldap-utils), a private
// slapd on a free port with an mdb database in a temporary directory, the core, cosine, inetorgperson
// and nis schemas, and people under ou=People. Changes while it runs go through ldapmodify (an
// independent client). .ci/run installs the packages; the tests skip with this reason without them.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './smtp.js';

const run = promisify(execFile);
const SLAPD = '/usr/sbin/slapd';
export const LDAP_MISSING = fs.existsSync(SLAPD) && fs.existsSync('/usr/bin/ldapmodify') ? undefined : 'slapd or ldap-utils is not installed (apt-get install slapd ldap-utils)';

export const SUFFIX = 'dc=example,dc=org';
export const PEOPLE = `ou=People,${SUFFIX}`;
export const ROOT_DN = `cn=admin,${SUFFIX}`;
export const ROOT_PASSWORD = 'root-secret';

export interface Person {
  uid: string;
  password: string;
  mail?: string;
  givenName?: string;
  sn?: string;
  /** The parent entry (default ou=People). */
  under?: string;
}

/** RFC 2307's {SSHA}: base64 of SHA-1(password + salt) + salt, as slappasswd writes it. */
export function ssha(password: string): string {
  const salt = crypto.randomBytes(8);
  return '{SSHA}' + Buffer.concat([crypto.createHash('sha1').update(password).update(salt).digest(), salt]).toString('base64');
}

export function personLdif(p: Person): string {
  const lines = [
    `dn: uid=${p.uid},${p.under ?? PEOPLE}`,
    'objectClass: inetOrgPerson',
    'objectClass: organizationalPerson',
    'objectClass: person',
    'objectClass: top',
    `uid: ${p.uid}`,
    `cn: ${p.givenName ?? p.uid} ${p.sn ?? 'Person'}`,
    `sn: ${p.sn ?? 'Person'}`,
    ...(p.givenName ? [`givenName: ${p.givenName}`] : []),
    ...(p.mail ? [`mail: ${p.mail}`] : []),
    `userPassword: ${ssha(p.password)}`,
  ];
  return lines.join('\n') + '\n\n';
}

export interface LdapServer {
  url: string;
  port: number;
  /** With `tls`: ldaps:// on its own port (StartTLS works on `url` too), and the self-signed certificate (its own CA) as a PEM file. */
  ldapsUrl?: string;
  caFile?: string;
  /** Runs ldapmodify (as the root DN) with this LDIF; `add` for new entries. */
  modify(ldif: string, opts?: { add?: boolean }): Promise<void>;
  setPassword(uid: string, password: string, under?: string): Promise<void>;
  remove(dn: string): Promise<void>;
  stop(): Promise<void>;
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Starts slapd with `people` (and `extraLdif`, e.g. more organizational units, loaded before them). */
export async function startLdap(opts: { people: Person[]; extraLdif?: string; tls?: boolean }): Promise<LdapServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rg-slapd-'));
  fs.mkdirSync(path.join(dir, 'db'));
  const conf = path.join(dir, 'slapd.conf');
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  if (opts.tls) {
    // A self-signed certificate for 127.0.0.1 (and localhost): a private CA of its own.
    await run('/usr/bin/openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert]);
  }
  fs.writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      `pidfile ${dir}/slapd.pid`,
      // A DN with an empty password is an unauthenticated bind (RFC 4513 5.1.2); many servers answer it
      // with success, so this one does too: the empty-password rule must hold without the server's help.
      'allow bind_anon_dn',
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      'database mdb',
      'maxsize 16777216',
      `suffix "${SUFFIX}"`,
      `rootdn "${ROOT_DN}"`,
      `rootpw ${ROOT_PASSWORD}`,
      `directory ${dir}/db`,
      ...(opts.tls ? [`TLSCertificateFile ${cert}`, `TLSCertificateKeyFile ${key}`] : []),
      // Users bind with their own password; nobody reads it. Everything else is readable (anonymous
      // searches test authType none).
      'access to attrs=userPassword by self write by anonymous auth by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const base = [`dn: ${SUFFIX}`, 'objectClass: dcObject', 'objectClass: organization', 'dc: example', 'o: Example', '', `dn: ${PEOPLE}`, 'objectClass: organizationalUnit', 'ou: People', '', ''].join('\n');
  fs.writeFileSync(path.join(dir, 'init.ldif'), base + (opts.extraLdif ?? '') + opts.people.map(personLdif).join(''));
  await run('/usr/sbin/slapadd', ['-f', conf, '-l', path.join(dir, 'init.ldif')]);
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const tlsPort = opts.tls ? await freePort() : undefined;
  const ldapsUrl = tlsPort ? `ldaps://127.0.0.1:${tlsPort}` : undefined;
  const child: ChildProcess = spawn(SLAPD, ['-h', [`${url}/`, ...(ldapsUrl ? [`${ldapsUrl}/`] : [])].join(' '), '-f', conf, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  // Never left behind: killed when the test process exits, whatever its hooks managed to do.
  const killOnExit = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()).length > 10_000 && (stderr = stderr.slice(-5000)));
  const started = Date.now();
  while (!(await accepting(port)) || (tlsPort !== undefined && !(await accepting(tlsPort)))) {
    if (child.exitCode !== null || Date.now() - started > 10_000) {
      child.kill('SIGKILL');
      throw new Error(`slapd did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const ldapmodify = async (ldif: string, add: boolean): Promise<void> => {
    const p = spawn('/usr/bin/ldapmodify', ['-x', '-H', url, '-D', ROOT_DN, '-w', ROOT_PASSWORD, ...(add ? ['-a'] : [])], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.stdin.end(ldif);
    const code = await new Promise<number | null>((r) => p.once('close', r));
    if (code !== 0) throw new Error(`ldapmodify failed (${code}): ${err}`);
  };
  return {
    url,
    port,
    ...(ldapsUrl ? { ldapsUrl, caFile: cert } : {}),
    modify: (ldif, o = {}) => ldapmodify(ldif, o.add === true),
    setPassword: (uid, password, under = PEOPLE) => ldapmodify(`dn: uid=${uid},${under}\nchangetype: modify\nreplace: userPassword\nuserPassword: ${ssha(password)}\n`, false),
    remove: (dn) => ldapmodify(`dn: ${dn}\nchangetype: delete\n`, false),
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
