import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import type { Realm, User } from '../storage/types.js';
import { attemptSecondFactor } from '../oauth/brute-force.js';
import { LdapUnavailable } from '../oauth/ldap/directory.js';
import { federatedUserValid } from '../oauth/ldap/federation.js';
import { assertionFields, checkPasswordlessAssertion, issueChallenge, passkeyOwner, requestOptions } from '../admin/operations/webauthn.js';
import { nowSeconds } from '../clock.js';
import { msg, type Text } from '../i18n/translator.js';
import { problemText } from './interaction/problems.js';

/**
 * A passkey sign-in (Keycloak's webauthn-passwordless), wherever a login page offers one: an
 * application's sign-in (src/http/interaction/webauthn-routes.ts) and the account page's own
 * (src/http/account/routes.ts). No username or password: the discoverable credential names the user
 * (userHandle), who then goes on as after a password and a second factor.
 */

/** The login page's passkey button, when a user of the realm has a passkey: a challenge bound to `boundTo`. */
export async function passkeyOption(services: Services, realm: Realm, boundTo: string, action: string): Promise<{ passkey?: { action: string; options: Record<string, unknown> } }> {
  if (!(await services.store.webauthn.realmHasPasswordless(realm.id))) return {};
  const challenge = await issueChallenge(services.store, realm, boundTo, 'passkey', nowSeconds(services.clock));
  return { passkey: { action, options: requestOptions(services.config, realm, challenge, [], true) } };
}

/** `error`: the words for the page, a message in the page's language when rendered. */
export type PasskeySignIn = { user: User } | { error: Text; status: 400 | 429 | 503 };

/**
 * Checks the passkey assertion the form posted (its fields named as webauthn.js sends them) against a
 * challenge bound to `boundTo`. Failures count against the named user only when the key is one of
 * their passkeys: a user's id is not a secret, and garbage naming them must not lock their second
 * factor. A refusal is audited (LOGIN_ERROR) and, when the user is blocked, answered with Retry-After.
 */
export async function passkeySignIn(services: Services, req: FastifyRequest, reply: FastifyReply, realm: Realm, input: { boundTo: string; clientId: string; field: (name: string) => string | undefined }): Promise<PasskeySignIn> {
  const assertion = { realm, boundTo: input.boundTo, ...assertionFields(input.field) };
  const named = await passkeyOwner(services.store, realm, assertion.userHandle, assertion.credentialId);
  let detail = 'no passkey of a user of the realm named';
  let signedIn: User | undefined;
  const outcome = named
    ? await attemptSecondFactor(services, realm, { user: named, ip: req.ip, clientId: input.clientId }, async (now) => {
        const r = await checkPasswordlessAssertion(services.store, services.config, { ...assertion, nowSeconds: now });
        if (r.outcome.ok) {
          signedIn = r.user;
          return undefined;
        }
        detail = r.outcome.detail;
        return problemText(r.outcome.message);
      })
    : { error: msg('passkeyNotAcceptedMessage') };
  // A federated user's passkey proves the key, not that the user directory still has the user.
  const proved: User | undefined = signedIn;
  if (!('error' in outcome) && proved?.federationLink) {
    try {
      if (!(await federatedUserValid(services, realm, proved))) {
        detail = 'the user directory no longer has this user';
        signedIn = undefined;
      }
    } catch (err) {
      if (!(err instanceof LdapUnavailable)) throw err;
      await services.audit.record({ realmId: realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: input.clientId, userId: proved.id, username: proved.username, ip: req.ip, reason: `user directory unavailable: ${err.message}` });
      reply.header('retry-after', '30');
      return { error: msg('userDirectoryUnavailableMessage'), status: 503 };
    }
  }
  if ('error' in outcome || !signedIn) {
    const retryAfter = 'retryAfter' in outcome ? outcome.retryAfter : undefined;
    await services.audit.record({ realmId: realm.id, type: 'LOGIN_ERROR', outcome: 'failure', clientId: input.clientId, ...(named ? { userId: named.id, username: named.username } : {}), ip: req.ip, reason: retryAfter ? 'blocked' : `passkey refused: ${detail}` });
    if (retryAfter) reply.header('retry-after', String(retryAfter));
    return { error: 'error' in outcome ? outcome.error : msg('passkeyRefusedMessage'), status: retryAfter ? 429 : 400 };
  }
  return { user: signedIn };
}
