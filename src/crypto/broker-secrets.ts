import crypto from 'node:crypto';
import type { Store } from '../storage/store.js';
import { storedSecret } from './key-encryption.js';
import { randomToken } from './random.js';
import { openValue, sealValue } from './sealed-values.js';

/**
 * Identity brokering's secrets. The client secret Realmgate holds at a provider must be sent to it, so it
 * is sealed, not hashed (src/crypto/sealed-values.ts), bound to the realm and alias, under a data key kept
 * like a private key and shared by every node. The same key derives what a sign-in at a provider needs
 * to remember (state, nonce, PKCE verifier) from the pending request, so nothing more is stored.
 */
const PREFIX = 'idp:v1:';
const dataKey = (store: Store): Promise<Buffer> => storedSecret(store, 'broker_data_key', () => randomToken(32));
const aad = (realmId: string, alias: string): string => `realmgate identity provider secret\0${realmId}\0${alias}`;

export async function sealProviderSecret(store: Store, realmId: string, alias: string, secret: string): Promise<string> {
  return sealValue(await dataKey(store), PREFIX, aad(realmId, alias), Buffer.from(secret, 'utf8'));
}

/** The provider's client secret; undefined when it does not open (altered, or another provider's row). */
export async function openProviderSecret(store: Store, realmId: string, alias: string, sealed: string): Promise<string | undefined> {
  return openValue(await dataKey(store), PREFIX, aad(realmId, alias), sealed)?.toString('utf8');
}

/**
 * A value of 256 bits derived from the data key for one sign-in at one provider: `purpose` is 'state',
 * 'nonce' or 'pkce'. Base64url (43 characters: a valid PKCE verifier, RFC 7636 4.1).
 */
export async function brokerValue(store: Store, purpose: 'state' | 'nonce' | 'pkce', realmId: string, interactionId: string, alias: string): Promise<string> {
  return crypto.createHmac('sha256', await dataKey(store)).update(`realmgate broker ${purpose}\0${realmId}\0${interactionId}\0${alias}`).digest('base64url');
}

/** User federation: an LDAP provider's bindCredential, sealed under the same data key, bound to the realm and provider id. */
const LDAP_PREFIX = 'ldap:v1:';
const ldapAad = (realmId: string, id: string): string => `realmgate ldap bind credential\0${realmId}\0${id}`;

export async function sealLdapCredential(store: Store, realmId: string, id: string, secret: string): Promise<string> {
  return sealValue(await dataKey(store), LDAP_PREFIX, ldapAad(realmId, id), Buffer.from(secret, 'utf8'));
}

/** The bind password; undefined when it does not open (altered, or another provider's row). */
export async function openLdapCredential(store: Store, realmId: string, id: string, sealed: string): Promise<string | undefined> {
  return openValue(await dataKey(store), LDAP_PREFIX, ldapAad(realmId, id), sealed)?.toString('utf8');
}
