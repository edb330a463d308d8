// A process that opens DATABASE_URL, waits until the file GO_FILE exists (so that several such processes
// migrate at the same moment), migrates, and prints "migrated" or the error.
import fs from 'node:fs';
import { openDatabase, migrate } from '../../src/storage/database.js';

const db = await openDatabase(process.env.DATABASE_URL!, { synchronous: 'NORMAL' });
process.stdout.write('ready\n');
while (!fs.existsSync(process.env.GO_FILE!)) await new Promise((r) => setTimeout(r, 2));
try {
  await migrate(db);
  process.stdout.write('migrated\n');
} catch (err) {
  process.stdout.write(`failed: ${(err as Error).message}\n`);
} finally {
  await db.close();
}
