import type { Store } from '../storage/store.js';
import { storedSecret } from './key-encryption.js';
import { randomToken } from './random.js';
import { openValue, sealValue } from './sealed-values.js';

/**
 * A realm's SMTP password. Realmgate must send it to the mail server, so it is sealed, not hashed
 * (src/crypto/sealed-values.ts), bound to its realm, under the data key identity brokering's secrets use
 * (src/crypto/broker-secrets.ts): one deployment secret, kept like a private key, shared by every node.
 */
const PREFIX = 'smtp:v1:';
const dataKey = (store: Store): Promise<Buffer> => storedSecret(store, 'broker_data_key', () => randomToken(32));
const aad = (realmId: string): string => `realmgate smtp password\0${realmId}`;

export async function sealSmtpPassword(store: Store, realmId: string, password: string): Promise<string> {
  return sealValue(await dataKey(store), PREFIX, aad(realmId), Buffer.from(password, 'utf8'));
}

/** The password; undefined when it does not open (altered, or another realm's row). */
export async function openSmtpPassword(store: Store, realmId: string, sealed: string): Promise<string | undefined> {
  return openValue(await dataKey(store), PREFIX, aad(realmId), sealed)?.toString('utf8');
}
