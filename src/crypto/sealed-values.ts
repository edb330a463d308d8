import crypto from 'node:crypto';

/**
 * A value the server must read back (an authenticator's key, a client secret at an identity provider),
 * so it cannot be hashed: encrypted with AES-256-GCM under a data key (a random IV each) and bound to
 * what it belongs to by the additional data, so that a row copied onto another does not open. Stored as
 * <prefix><iv>:<tag>:<ciphertext>, each base64url.
 */
export function sealValue(key: Buffer, prefix: string, aad: string, value: Buffer): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(value), c.final()]);
  return `${prefix}${[iv, c.getAuthTag(), ct].map((b) => b.toString('base64url')).join(':')}`;
}

/** The value sealed by sealValue; undefined when it does not open (altered, another prefix, or another owner's). */
export function openValue(key: Buffer, prefix: string, aad: string, sealed: string): Buffer | undefined {
  if (!sealed.startsWith(prefix)) return undefined;
  const [iv, tag, ct] = sealed.slice(prefix.length).split(':').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !tag || !ct || iv.length !== 12 || tag.length !== 16) return undefined;
  try {
    const d = crypto.createDecipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(aad)).setAuthTag(tag);
    return Buffer.concat([d.update(ct), d.final()]);
  } catch {
    return undefined;
  }
}
