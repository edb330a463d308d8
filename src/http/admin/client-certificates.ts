import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller } from '../../admin/authorization.js';
import { clientKeyInfo, JWT_CREDENTIAL, NO_KEY_GENERATION, uploadClientKey } from '../../admin/operations/client-certificates.js';
import { ValidationError } from '../../admin/validation.js';
import type { Client } from '../../storage/types.js';
import { actorOf, requireRole } from './authenticate.js';
import { notFound } from './errors.js';
import { callerOf, loadRealm } from './plugin.js';
import { params, security } from './schemas.js';

const tags = ['clients'];
const certParams = params({ id: { type: 'string', maxLength: 255 }, attr: { type: 'string', maxLength: 255 } });
type P = { Params: { realm: string; id: string; attr: string } };

/** A certificate, a public key or a JWKS is a few kilobytes: a larger upload is refused (413). */
const MAX_UPLOAD_BYTES = 64 * 1024;

/**
 * The fields of a multipart/form-data body (RFC 7578), files included, as text: keycloak-admin-client's
 * FormData of uploadCertificate / uploadKey (keystoreFormat, and file as a File). A field named twice
 * keeps its first value; anything malformed gives fewer fields (then a 400 naming the missing one), never
 * an exception.
 */
export function formDataFields(body: string, contentType: string | undefined): Record<string, string> {
  const m = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType ?? '');
  const boundary = m?.[1] ?? m?.[2];
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!boundary) return fields;
  for (const part of body.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const end = part.indexOf('\r\n\r\n');
    // A part's headers are a few short lines: longer ones are not looked into.
    if (end < 0 || end > 1024) continue;
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]{1,100})"/i.exec(part.slice(0, end))?.[1];
    if (!name || name in fields) continue;
    // The part's content ends with the CRLF that precedes the next delimiter (RFC 2046 5.1.1).
    fields[name] = part.slice(end + 4).replace(/\r\n$/, '');
  }
  return fields;
}

/**
 * Keycloak's ClientAttributeCertificateResource (clients/{id}/certificates/{attr}) for the keys of signed
 * JWT client authentication, attr jwt.credential: reading needs view-clients, changing manage-clients.
 * Uploads take a certificate, a public key or a JWKS; generate, download and generate-and-download, which
 * make or hand out a private key, are refused (400) and say what to do instead.
 */
export async function clientCertificateRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  const { store } = services;
  // Scoped to this plugin's routes (Fastify encapsulation): text, bounded.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: MAX_UPLOAD_BYTES }, (_req, body, done) => done(null, body));

  async function target(caller: AdminCaller, p: P['Params'], role: 'view-clients' | 'manage-clients'): Promise<Client> {
    const realm = await loadRealm(services, caller, p.realm);
    requireRole(caller, realm.id, role);
    const client = await store.clients.get(realm.id, p.id);
    if (!client) throw notFound('Could not find client');
    // Keycloak takes any attribute prefix (saml.signing, saml.encryption for SAML clients); Realmgate keeps keys for jwt.credential only.
    if (p.attr !== JWT_CREDENTIAL) throw notFound(`Realmgate keeps a client's keys only for signed JWT authentication (certificates/${JWT_CREDENTIAL}), not ${p.attr}`);
    return client;
  }

  app.get<P>(
    '/realms/:realm/clients/:id/certificates/:attr',
    { schema: { tags, summary: "The client's key for signed JWT authentication (attr jwt.credential): certificate, publicKey (base64 DER) and kid, as Keycloak's CertificateRepresentation", params: certParams, security } },
    async (req) => clientKeyInfo(await target(callerOf(req), req.params, 'view-clients')),
  );

  for (const path of ['upload-certificate', 'upload']) {
    app.post<P>(
      `/realms/:realm/clients/:id/certificates/:attr/${path}`,
      {
        schema: {
          tags,
          summary: `Set the client's key from a multipart/form-data upload: keystoreFormat "Certificate PEM", "Public Key PEM" or "JSON Web Key Set", and file; keystores (JKS, PKCS12) are refused. At most ${MAX_UPLOAD_BYTES / 1024} KB`,
          params: certParams,
          security,
        },
      },
      async (req) => {
        const caller = callerOf(req);
        const client = await target(caller, req.params, 'manage-clients');
        if (typeof req.body !== 'string') throw new ValidationError('the upload must be multipart/form-data with the fields keystoreFormat and file');
        const fields = formDataFields(req.body, req.headers['content-type']);
        const info = await uploadClientKey(store, { realmId: client.realmId, clientId: client.clientId, keystoreFormat: fields.keystoreFormat, file: fields.file }, actorOf(caller));
        services.cache.clear();
        return info;
      },
    );
  }

  const refusals: Array<{ path: string; role: 'view-clients' | 'manage-clients'; summary: string }> = [
    { path: 'generate', role: 'manage-clients', summary: "Keycloak generates a key pair for the client and answers its private key: refused (400), Realmgate keeps no client's private key" },
    { path: 'download', role: 'view-clients', summary: "Keycloak answers a keystore (JKS/PKCS12) with the client's keys: refused (400)" },
    { path: 'generate-and-download', role: 'manage-clients', summary: 'Keycloak generates a key pair and answers it as a keystore: refused (400)' },
  ];
  for (const r of refusals) {
    app.post<P>(`/realms/:realm/clients/:id/certificates/:attr/${r.path}`, { schema: { tags, summary: r.summary, params: certParams, security } }, async (req) => {
      await target(callerOf(req), req.params, r.role);
      throw new ValidationError(NO_KEY_GENERATION);
    });
  }
}
