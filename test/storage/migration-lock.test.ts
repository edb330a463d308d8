import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { dialects } from '../helpers/db.js';
import { openDatabase, migrationsApplied } from '../../src/storage/database.js';

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../helpers/migrate-child.ts');

// Issue 11 item 4: nodes may start together; their migrations take turns under a lock.
for (const dialect of dialects()) {
  describe(`migrations under a lock (${dialect})`, () => {
    test('four processes migrating one fresh database at the same moment all succeed', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'realmgate-migrate-'));
      const go = path.join(dir, 'go');
      let url = `sqlite:${path.join(dir, 'fresh.db')}`;
      const schema = `m_${crypto.randomBytes(6).toString('hex')}`;
      if (dialect === 'postgres') {
        const u = new URL(process.env.TEST_DATABASE_URL!);
        u.searchParams.set('schema', schema);
        url = u.href;
      }
      try {
        const children = Array.from({ length: 4 }, () => {
          const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, DATABASE_URL: url, GO_FILE: go } });
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          const done = new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
          const ready = async (): Promise<void> => {
            while (!out.includes('ready')) {
              if (child.exitCode !== null) throw new Error(out);
              await new Promise((r) => setTimeout(r, 10));
            }
          };
          return { ready, done };
        });
        // Every process has its connection open; then all start migrating at once.
        await Promise.all(children.map((c) => c.ready()));
        fs.writeFileSync(go, '');
        const outputs = await Promise.all(children.map((c) => c.done));
        for (const out of outputs) assert.match(out, /migrated/, out);
        const db = await openDatabase(url);
        try {
          assert.equal(await migrationsApplied(db), true);
        } finally {
          await db.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
        if (dialect === 'postgres') {
          const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
          await c.connect();
          await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => c.end());
        }
      }
    });
  });
}
