import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { handleIntrospection } from '../../oauth/introspection.js';
import { handleRevocation } from '../../oauth/revocation.js';
import { BearerError, bearerToken, dpopToken, userInfo } from '../../oidc/userinfo.js';
import { dpopHeader } from '../../oauth/dpop.js';
import { OAuthError } from '../../oauth/errors.js';
import { DPOP_ALGS } from '../../resource-server/dpop-proof.js';
import { setNoStore } from '../plugins/security-headers.js';
import { checkBrowserOrigin, jsonErrorHandler, requireForm } from './routes.js';
import { corsForBearer, preflight, varyOrigin } from '../plugins/cors.js';

const OIDC = '/auth/realms/:realm/protocol/openid-connect';

/** RFC 6750 3: the challenge of a protected resource, with the error when there is one. */
export function sendBearerError(reply: FastifyReply, realmId: string, err: BearerError): FastifyReply {
  const realm = realmId.replace(/[^A-Za-z0-9._-]/g, '');
  // RFC 9449 7.1: the DPoP challenge names the algorithms a proof may use.
  const parts = err.scheme === 'DPoP' ? [`DPoP realm="${realm}"`, `algs="${DPOP_ALGS.join(' ')}"`] : [`Bearer realm="${realm}"`];
  if (err.error) parts.push(`error="${err.error}"`, `error_description="${err.description.replace(/["\\]/g, '')}"`);
  setNoStore(reply);
  reply.header('www-authenticate', parts.join(', '));
  // RFC 6750 3.1: a request without any token gets the challenge and no error information.
  return err.error ? reply.code(err.status).send({ error: err.error, error_description: err.description }) : reply.code(err.status).send();
}

/** Introspection (RFC 7662), revocation (RFC 7009) and UserInfo (OIDC Core 5.3). */
export async function lifecycleRoutes(app: FastifyInstance, opts: { services: Services }): Promise<void> {
  const { services } = opts;
  app.setErrorHandler(jsonErrorHandler(services));
  varyOrigin(app);
  preflight(app, services, `${OIDC}/token/introspect`, 'POST');
  preflight(app, services, `${OIDC}/revoke`, 'POST');
  preflight(app, services, `${OIDC}/userinfo`, 'GET, POST');

  app.post<{ Params: { realm: string } }>(`${OIDC}/token/introspect`, async (req, reply) => {
    requireForm(req.headers['content-type']);
    await checkBrowserOrigin(services, req, reply);
    const body = await handleIntrospection(services, { realmId: req.params.realm, authorization: req.headers.authorization, body: req.body as Record<string, unknown>, ip: req.ip });
    setNoStore(reply);
    return body;
  });

  app.post<{ Params: { realm: string } }>(`${OIDC}/revoke`, async (req, reply) => {
    requireForm(req.headers['content-type']);
    await checkBrowserOrigin(services, req, reply);
    await handleRevocation(services, { realmId: req.params.realm, authorization: req.headers.authorization, body: req.body as Record<string, unknown>, ip: req.ip });
    setNoStore(reply);
    return reply.code(200).send();
  });

  const userinfo = async (req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    const header = req.headers.authorization;
    await corsForBearer(services, req, reply, req.params.realm, header ? /^(?:Bearer|DPoP) +(\S+)/i.exec(header)?.[1] : undefined);
    try {
      if (req.method === 'POST' && req.body !== undefined && !req.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
        throw new BearerError(400, 'invalid_request', 'the request body must be application/x-www-form-urlencoded');
      }
      // RFC 9449 7.1: Authorization: DPoP <token> with a DPoP proof header; otherwise RFC 6750.
      const dpop = dpopToken(header);
      let proof: string | undefined;
      if (dpop !== undefined) {
        try {
          proof = req.headers.dpop === undefined ? undefined : dpopHeader(req.raw.rawHeaders);
        } catch (err) {
          if (err instanceof OAuthError) throw new BearerError(401, 'invalid_dpop_proof', err.description, 'DPoP');
          throw err;
        }
      }
      const token = dpop ?? bearerToken(header, req.method === 'POST' ? req.body : undefined);
      const claims = await userInfo(services, req.params.realm, token, { scheme: dpop !== undefined ? 'DPoP' : 'Bearer', proof, method: req.method });
      setNoStore(reply);
      return reply.send(claims);
    } catch (err) {
      if (err instanceof BearerError) return sendBearerError(reply, req.params.realm, err);
      throw err;
    }
  };
  app.get<{ Params: { realm: string } }>(`${OIDC}/userinfo`, (req, reply) => userinfo(req, reply));
  app.post<{ Params: { realm: string } }>(`${OIDC}/userinfo`, (req, reply) => userinfo(req, reply));
}
