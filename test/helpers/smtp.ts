// A real SMTP server for the tests that send mail: Debian's python3-aiosmtpd, delivering into a Maildir,
// and the messages read back with Python's email module (an independent MIME parser). .ci/run installs it.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const PYTHON = '/usr/bin/python3';
export const SMTP_MISSING = (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import aiosmtpd'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'python3-aiosmtpd is not installed (apt-get install python3-aiosmtpd)';
  }
})();

export interface ReceivedMail {
  from: string;
  to: string;
  subject: string;
  replyTo: string | null;
  text: string;
  html: string;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
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

const PARSE = `
import email, email.policy, json, sys
out = []
for p in sys.argv[1:]:
    with open(p, 'rb') as f:
        m = email.message_from_binary_file(f, policy=email.policy.default)
    t = m.get_body(('plain',))
    h = m.get_body(('html',))
    out.append({'from': str(m['from']), 'to': str(m['to']), 'subject': str(m['subject']), 'replyTo': str(m['reply-to']) if m['reply-to'] else None,
                'text': t.get_content() if t else '', 'html': h.get_content() if h else ''})
print(json.dumps(out))
`;

// aiosmtpd's command line has no authentication: the same Maildir handler behind a Controller that
// requires AUTH. The credentials come as arguments; the comparison is aiosmtpd's LoginPassword's bytes.
const AUTH_SERVER = `
import signal, sys, threading, warnings
warnings.simplefilter('ignore')
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import AuthResult, LoginPassword
port, box, user, password = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
def authenticate(server, session, envelope, mechanism, data):
    ok = isinstance(data, LoginPassword) and data.login == user and data.password == password
    # handled=False: aiosmtpd answers 535 itself (with its default, True, the client waits for an answer)
    return AuthResult(success=ok, handled=False)
c = Controller(Mailbox(box), hostname='127.0.0.1', port=port, authenticator=authenticate, auth_required=True, auth_require_tls=False)
c.start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
stop.wait()
c.stop()
`;

export class SmtpServer {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {}

  /**
   * Messages parsed so far, by their file in the Maildir. A file appears in new/ complete (aiosmtpd's
   * Mailbox writes it in tmp/ and renames it) and never changes after, so each is parsed once: the waits
   * poll every 50 ms, and parsing every message at each poll started a Python process each time.
   */
  private readonly parsed = new Map<string, ReceivedMail>();

  /**
   * With `auth`, the server advertises AUTH (PLAIN and LOGIN, over plain TCP: aiosmtpd's
   * auth_require_tls off) and takes mail only from a client that authenticated with that user and password.
   */
  static async start(o: { auth?: { user: string; password: string } } = {}): Promise<SmtpServer> {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-smtp-'));
    const box = path.join(dir, 'box');
    const args = o.auth ? ['-c', AUTH_SERVER, String(port), box, o.auth.user, o.auth.password] : ['-m', 'aiosmtpd', '-n', '-l', `127.0.0.1:${port}`, '-c', 'aiosmtpd.handlers.Mailbox', box];
    const child = spawn(PYTHON, args, { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await accepting(port))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('aiosmtpd did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    return new SmtpServer(port, dir, child);
  }

  /** Every message delivered so far, oldest first. */
  messages(): ReceivedMail[] {
    const box = path.join(this.dir, 'box', 'new');
    if (!fs.existsSync(box)) return [];
    const files = fs
      .readdirSync(box)
      .map((f) => path.join(box, f))
      .sort((a, b) => fs.statSync(a).mtimeMs - fs.statSync(b).mtimeMs || a.localeCompare(b));
    const fresh = files.filter((f) => !this.parsed.has(f));
    if (fresh.length > 0) {
      const mails = JSON.parse(execFileSync(PYTHON, ['-c', PARSE, ...fresh], { encoding: 'utf8' })) as ReceivedMail[];
      fresh.forEach((f, i) => this.parsed.set(f, mails[i]!));
    }
    return files.map((f) => this.parsed.get(f)!);
  }

  /** Waits until `count` messages arrived (mail is sent after the page answered). */
  async waitFor(count: number, o: { to?: string; timeoutMs?: number } = {}): Promise<ReceivedMail[]> {
    const deadline = Date.now() + (o.timeoutMs ?? 10_000);
    for (;;) {
      const all = this.messages().filter((m) => o.to === undefined || m.to === o.to);
      if (all.length >= count) return all;
      if (Date.now() > deadline) throw new Error(`expected ${count} message(s), got ${all.length}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until no message arrived for `quietMs` (mail still on its way from an earlier step). */
  async settle(quietMs = 300): Promise<void> {
    let last = -1;
    for (;;) {
      const n = this.messages().length;
      if (n === last) return;
      last = n;
      await new Promise((r) => setTimeout(r, quietMs));
    }
  }

  /** Clears the mailbox. */
  clear(): void {
    const box = path.join(this.dir, 'box', 'new');
    if (fs.existsSync(box)) for (const f of fs.readdirSync(box)) fs.rmSync(path.join(box, f));
    this.parsed.clear();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The action link in a mail's text part. */
export function linkIn(mail: ReceivedMail): string {
  const m = /https?:\/\/\S+\/login-actions\/action-token\?key=\S+/.exec(mail.text);
  if (!m) throw new Error(`no link in mail:\n${mail.text}`);
  return m[0];
}
