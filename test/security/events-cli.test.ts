import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cliRunner } from '../helpers/cli.js';
import { dialects, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { Store } from '../../src/storage/store.js';
import { createRealm } from '../../src/admin/operations.js';
import { sortableId } from '../../src/crypto/random.js';

// The installed command (npm run build first).

// Issue 12 item 7: attacker-typed text (a username typed at the login form) never reaches the
// operator's terminal raw.
const HOSTILE = [
  'mallory\n2026-01-01T00:00:00.000Z\tLOGIN\tsuccess\tweb-app\tadmin',
  'esc\x1b[2J\x1b]0;pwned\x07',
  'c1\u009b31m\u0085',
  'del\x7f',
  'bidi\u202egnp.exe\u2066\u2069\u200f',
  'tab\there\r',
];

for (const dialect of dialects()) {
  describe(`realmgate events output (${dialect})`, () => {
    let tdb: TestDatabase;
    before(async () => {
      tdb = await createTestDatabase(dialect);
      const store = new Store(tdb.db);
      await createRealm(store, { id: 'ev' });
      const second = 1_800_000_000;
      // Same second: only the id (milliseconds, then a sequence) orders them.
      for (const [i, username] of HOSTILE.entries()) {
        await store.events.record({ id: sortableId(), time: second, realmId: 'ev', type: 'LOGIN_ERROR', outcome: 'failure', clientId: `c\x1b${i}`, userId: i === 0 ? 'user-id-0' : null, username, ip: '127.0.0.1', reason: `r\n${i}` });
      }
      await tdb.db.close();
    });
    after(async () => {
      const { openDatabase } = await import('../../src/storage/database.js');
      tdb.db = await openDatabase(tdb.url);
      await tdb.drop();
    });

    const { run } = cliRunner(() => tdb.url);

    test('every printed field has its control and bidi characters escaped, one line per event', () => {
      const r = run(['events', 'ev']);
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => l.length > 0);
      assert.equal(lines.length, HOSTILE.length + 1, r.stdout);
      // Nothing but printable text and the tab separators.
      for (const l of lines) assert.doesNotMatch(l, /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u, JSON.stringify(l));
      assert.match(lines[0]!, /^time\ttype\toutcome\tclient\tusername\tuser id\tip\treason$/);
      const rows = lines.slice(1).map((l) => l.split('\t'));
      for (const row of rows) assert.equal(row.length, 8, JSON.stringify(row));
      // Newest first, in insertion order within the second.
      const names = rows.map((r) => r[4]);
      assert.match(names[HOSTILE.length - 1]!, /^mallory\\n2026/);
      assert.match(names[0]!, /^tab\\there\\r$/);
      assert.match(names[HOSTILE.length - 2]!, /^esc\\x1b\[2J\\x1b\]0;pwned\\x07$/);
      assert.ok(names.some((n) => n === 'bidi\\u{202e}gnp.exe\\u{2066}\\u{2069}\\u{200f}'), names.join(' | '));
      // Separate columns for username and user id; the time has milliseconds.
      assert.equal(rows[HOSTILE.length - 1]![5], 'user-id-0');
      assert.equal(rows[0]![5], '-');
      assert.match(rows[0]![0]!, /^2027-01-15T08:00:00\.\d{3}Z$/);
    });

    test('--json stays exact', () => {
      const r = run(['events', 'ev', '--json']);
      assert.equal(r.status, 0, r.stderr);
      const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { username: string; reason: string });
      assert.deepEqual(events.map((e) => e.username), [...HOSTILE].reverse());
      assert.equal(events[0]!.reason, `r\n${HOSTILE.length - 1}`);
    });
  });
}
