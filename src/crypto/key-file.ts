import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import type { Store } from '../storage/store.js';
import { KeySecretError, envKeySecret, isSealed, openPrivateJwk, sealPrivateJwk, useKeyFileSecret } from './key-encryption.js';

/**
 * Makes sure private signing keys are never stored in clear (issue 12): with REALMGATE_KEY_SECRET the
 * secret comes from the environment; without it from a key file (config.keyFile), created on first use
 * with 256 random bits and mode 0600, and never written to the database, so that a database dump alone
 * yields no private key. Keys stored in clear by an earlier version (signing keys and the refresh tokens'
 * HMAC keys) are sealed now. Fails with a
 * KeySecretError when the stored keys are sealed and the file is missing, or the secret does not open
 * them. `announce` tells the operator about a new file and about a file others can read.
 */
export async function prepareKeyEncryption(config: Config, store: Store, announce: (message: string) => void): Promise<void> {
  if (envKeySecret() === undefined) {
    let value = readKeyFile(config.keyFile, announce);
    if (value === undefined) {
      if (await store.keys.anySealed()) {
        throw new KeySecretError(`the signing keys are encrypted, but the key file ${config.keyFile} does not exist: restore it (or set REALMGATE_KEY_SECRET to its content)`);
      }
      value = createKeyFile(config.keyFile, announce);
    }
    useKeyFileSecret(value, config.keyFile);
  }
  const keys = await store.keys.listAll();
  // One sealed key tells whether the secret is the right one (they all share it).
  const sealed = keys.find((k) => isSealed(k.privateJwk));
  if (sealed) openPrivateJwk(sealed.privateJwk);
  for (const k of keys) if (!isSealed(k.privateJwk)) await store.keys.replacePrivate(k.kid, k.privateJwk, sealPrivateJwk(k.privateJwk));
  // The refresh tokens' HMAC keys too (an import or bootstrap-admin of an earlier version stored them in clear).
  for (const k of await store.hmacKeys.listAll()) if (!isSealed(k.secretJwk)) await store.hmacKeys.replaceSecret(k.kid, k.secretJwk, sealPrivateJwk(k.secretJwk));
}

/**
 * Opens the key-encryption secret for a command that only reads sealed keys (an export with secrets):
 * REALMGATE_KEY_SECRET or the key file, never creating one and never writing the database.
 */
export function openKeySecret(config: Config, announce: (message: string) => void): void {
  if (envKeySecret() !== undefined) return;
  const value = readKeyFile(config.keyFile, announce);
  if (value !== undefined) useKeyFileSecret(value, config.keyFile);
}

function readKeyFile(file: string, announce: (message: string) => void): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KeySecretError(`cannot read the key file ${file}: ${(err as Error).message}`);
  }
  const value = text.trim();
  if (value.length < 32) throw new KeySecretError(`the key file ${file} is empty or too short (at least 32 characters)`);
  if (process.platform !== 'win32' && (fs.statSync(file).mode & 0o077) !== 0) announce(`the key file ${file} can be read by other users: chmod 600 it`);
  return value;
}

function createKeyFile(file: string, announce: (message: string) => void): string {
  const value = crypto.randomBytes(32).toString('base64url');
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    // 'wx': when another process created it first, that one is used.
    fs.writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(file, announce)!;
    throw new KeySecretError(`cannot create the key file ${file}: ${(err as Error).message}`);
  }
  announce(`created the key-encryption key file ${path.resolve(file)} (mode 0600): back it up apart from the database; without it the signing keys cannot be opened`);
  return value;
}
