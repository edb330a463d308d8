import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { Client } from '../../storage/types.js';
import { parseJwks } from '../../oauth/client-keys.js';
import { ValidationError } from '../validation.js';
import type { Actor } from './common.js';
import { changeClient, checkJwksString, type ClientJwtKeysChange } from './clients.js';

/**
 * The keys a client signs its assertions with (private_key_jwt), as Keycloak's "Keys" tab and its
 * ClientAttributeCertificateResource show and take them for the attribute prefix jwt.credential: a
 * certificate, a public key or a JWKS. Realmgate keeps public keys only: it neither generates a client's
 * key pair nor takes a keystore (a private key the server would have seen).
 */

/** The attribute prefix of a client's signed-JWT keys: the only one Realmgate has (no SAML keys). */
export const JWT_CREDENTIAL = 'jwt.credential';

/** Keycloak's keystoreFormat values of the formats that carry a public key only. */
export const UPLOAD_FORMATS = { certificate: 'Certificate PEM', publicKey: 'Public Key PEM', jwks: 'JSON Web Key Set' } as const;

/** Keycloak's CertificateRepresentation (never a privateKey here). */
export interface CertificateInfo {
  certificate?: string;
  publicKey?: string;
  kid?: string;
}

export const NO_KEY_GENERATION =
  'Realmgate does not generate key pairs or keystores for clients (the server would have seen the private key): ' +
  'make the key pair where the client runs, then upload its certificate or public key (upload-certificate, keystoreFormat "Certificate PEM" or "Public Key PEM") or its JWKS ("JSON Web Key Set"), ' +
  'or set the client\'s JWKS URL (attributes use.jwks.url "true" and jwks.url)';

/** Keycloak's JWKSUtils.getKeyForUse(SIG): the first key for signatures (use "sig", or no use). */
function signatureKey(jwks: string): CertificateInfo | undefined {
  const key = parseJwks(jwks).keys.find((k) => k.use === undefined || k.use === 'sig');
  if (!key) return undefined;
  const publicKey = createPublicKey({ key: key as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'der' }).toString('base64');
  return { publicKey, ...(typeof key.kid === 'string' ? { kid: key.kid } : {}) };
}

/**
 * The client's key as Keycloak's GET certificates/jwt.credential shows it: the inline JWKS's signature
 * key (base64 DER public key and kid) when use.jwks.string is on, else the certificate and public key
 * (base64 DER, as Keycloak writes them). A JWKS URL is not read: Keycloak does not show it here either.
 */
export function clientKeyInfo(client: Client): CertificateInfo {
  const k = client.jwtKeys;
  if (!k) return {};
  if (k.useJwksString && k.jwksString) {
    try {
      return signatureKey(k.jwksString) ?? {};
    } catch {
      return {};
    }
  }
  return { ...(k.certificate ? { certificate: k.certificate } : {}), ...(k.publicKey ? { publicKey: k.publicKey } : {}) };
}

/**
 * Keycloak's upload and upload-certificate for jwt.credential: the file's certificate, public key or JWKS
 * becomes the client's key, replacing the others (the inline JWKS switched off for a certificate or key,
 * on for a JWKS), through changeClient: the same checks and admin event as any client change. As
 * Keycloak, use.jwks.url is left as it is (when on, the JWKS URL still comes first).
 */
export async function uploadClientKey(store: Store, input: { realmId: string; clientId: string; keystoreFormat: string | undefined; file: string | undefined }, actor: Actor): Promise<CertificateInfo> {
  const { keystoreFormat, file } = input;
  if (keystoreFormat === undefined) throw new ValidationError('keystoreFormat cannot be null');
  if (file === undefined || file.trim() === '') throw new ValidationError('file cannot be empty');
  let change: ClientJwtKeysChange;
  if (keystoreFormat === UPLOAD_FORMATS.certificate) {
    change = { certificate: file, publicKey: '', jwksString: '', useJwksString: false };
  } else if (keystoreFormat === UPLOAD_FORMATS.publicKey) {
    change = { publicKey: file, certificate: '', jwksString: '', useJwksString: false };
  } else if (keystoreFormat === UPLOAD_FORMATS.jwks) {
    checkJwksString(file);
    if (!signatureKey(file)) throw new ValidationError('the JWKS has no key for signatures (use "sig")');
    change = { jwksString: file, useJwksString: true, certificate: '', publicKey: '' };
  } else {
    throw new ValidationError(`keystoreFormat ${JSON.stringify(keystoreFormat.slice(0, 40))} is not taken: ${NO_KEY_GENERATION}`);
  }
  const { client } = await changeClient(store, { realmId: input.realmId, clientId: input.clientId, changes: { jwtKeys: change } }, actor);
  return clientKeyInfo(client);
}
