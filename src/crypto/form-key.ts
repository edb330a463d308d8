import crypto from 'node:crypto';
import type { Store } from '../storage/store.js';

const KEY_NAME = 'form_csrf_key';

/**
 * The key of the CSRF tokens of forms that exist before any pending request (account, logout, device):
 * 256 random bits made once per deployment and kept in the database, so every server process shares it
 * and a browser never sees it. Whoever can set a browser's cookies (a sibling subdomain) therefore cannot
 * compute a token for them (issue 12); whoever can read the database has far more than that already.
 */
export class FormKey {
  private pending: Promise<Buffer> | undefined;

  constructor(private readonly store: Store) {}

  get(): Promise<Buffer> {
    this.pending ??= this.store.meta.getOrCreate(KEY_NAME, () => crypto.randomBytes(32).toString('base64url')).then(
      (v) => Buffer.from(v, 'base64url'),
      (err: unknown) => {
        // A database hiccup must not be remembered: the next form tries again.
        this.pending = undefined;
        throw err;
      },
    );
    return this.pending;
  }
}
