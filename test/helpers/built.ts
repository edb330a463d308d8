import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A copy of the built server (dist/realmgate.mjs and dist/realmgate.cjs; `npm run build` first) in a
 * directory of its own inside dist/, so that node_modules is found and a code cache it writes is its
 * own, and a data directory for its database. `remove` deletes both.
 */
export function builtCopy(label: string): { dir: string; data: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(ROOT, 'dist', `.${label}-test-`));
  for (const f of ['realmgate.mjs', 'realmgate.cjs']) fs.copyFileSync(path.join(ROOT, 'dist', f), path.join(dir, f));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), `realmgate-${label}-`));
  return {
    dir,
    data,
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A TCP port free on `host` at the moment of asking. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}
