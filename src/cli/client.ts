import type { Command } from 'commander';
import { defaultScopesOf } from '../oauth/scopes.js';
import { CliError, collect, notBeforeOptions, runNotBefore, withStore, type NotBeforeOptions } from './common.js';
import fs from 'node:fs';
import { changeClient, createClient, deleteClient, invalidatePreviousSecret, isRequestObjectRequired, parseKeepPrevious, rotateClientSecret, setClientEnabled, updateClientShowingSecret, type ClientJwtKeysChange, type ListChange } from '../admin/operations.js';
import { keySource } from '../oauth/client-keys.js';
import { checkChosenClientSecret } from '../admin/validation.js';
import { onOff } from './common.js';
import type { Client, RequestObjectRequired, TokenExchangeRefresh } from '../storage/types.js';
import { InvalidArgumentError } from 'commander';
import type { FrontchannelLogoutChange } from '../admin/operations/clients.js';
import { registerMapperCommands } from './mapper.js';
import { registerScopeMappingCommands } from './scope-mappings.js';
import { registerInitialAccessCommands } from './initial-access.js';
import { terminalSafe } from './terminal-text.js';

const AUTH_METHOD_HELP =
  'token endpoint authentication the client may use: client_secret_basic, client_secret_post (repeatable or comma-separated; default both), or private_key_jwt alone (a JWT signed with its key, RFC 7523; no secret; give --jwks-url, --jwks-file or --certificate-file)';
const JWKS_URL_HELP = "private_key_jwt: where the client publishes its public keys (a JWKS; http or https; fetched with a 5 s timeout, 64 KB at most, no redirects; Keycloak's jwks.url)";
const JWKS_FILE_HELP = "private_key_jwt: a file holding the client's public keys as a JWKS (stored inline; Keycloak's jwks.string)";
const CERTIFICATE_FILE_HELP = "private_key_jwt: a file holding the client's X.509 certificate, PEM or base64 DER (Keycloak's jwt.credential.certificate)";
const ASSERTION_ALG_HELP = "private_key_jwt: the only algorithm its assertions may use (RS256, PS256, ES256, EdDSA, ...; Keycloak's token.endpoint.auth.signing.alg); default any asymmetric one";
const ASSERTION_MAX_EXP_HELP = "private_key_jwt: seconds an assertion is accepted after its iat (default 60; Keycloak's token.endpoint.auth.signing.max.exp)";

/** The --jwks-url/--jwks-file/--certificate-file/--assertion-alg/--assertion-max-exp options as a change of the client's JWT keys. */
function jwtKeysChange(o: JwtKeyOptions, update: boolean): ClientJwtKeysChange | undefined {
  if (o.jwksUrl !== undefined && o.jwksFile !== undefined) throw new CliError('give --jwks-url or --jwks-file, not both');
  const read = (file: string, what: string): string => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(`cannot read the ${what} file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const out: ClientJwtKeysChange = {};
  // Keycloak's order decides which key source is used: the URL when use.jwks.url, else the inline JWKS.
  if (o.jwksUrl !== undefined) Object.assign(out, { jwksUrl: o.jwksUrl, useJwksUrl: o.jwksUrl !== '' });
  if (o.jwksFile !== undefined) Object.assign(out, { jwksString: read(o.jwksFile, 'JWKS'), useJwksString: true, ...(update ? { useJwksUrl: false } : {}) });
  if (o.certificateFile !== undefined) Object.assign(out, { certificate: read(o.certificateFile, 'certificate') });
  if (o.assertionAlg !== undefined) out.signingAlg = o.assertionAlg;
  if (o.assertionMaxExp !== undefined) {
    if (!/^\d{1,9}$/.test(o.assertionMaxExp)) throw new CliError('--assertion-max-exp takes a number of seconds');
    out.maxExp = Number(o.assertionMaxExp);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

interface JwtKeyOptions {
  jwksUrl?: string;
  jwksFile?: string;
  certificateFile?: string;
  assertionAlg?: string;
  assertionMaxExp?: string;
}
const ID_TOKEN_ALG_HELP = 'algorithm of its ID tokens: RS256 (default), ES256 or EdDSA';
const WEB_ORIGIN_HELP = 'a browser origin (scheme://host[:port]) allowed to call the token, userinfo and account endpoints (CORS) and to frame the session-status page; "+" = the origins of the redirect URIs; "*" is refused';
const BACKCHANNEL_URL_HELP = "OpenID Connect Back-Channel Logout: where a logout token is POSTed when a session the client was used in ends (http or https, no fragment; Keycloak's backchannel.logout.url)";
const BACKCHANNEL_SID_HELP = 'the logout token carries the session id (sid; the default)';
const BACKCHANNEL_OFFLINE_HELP = "a logout also revokes the user's offline tokens of this client";
const REQUIRE_PAR_HELP = "on: the authorization endpoint takes only this client's pushed authorization requests (RFC 9126; Keycloak's require.pushed.authorization.requests); default off";
const TOKEN_EXCHANGE_HELP = "on: the client may exchange access tokens meant for it for narrower ones (RFC 8693; Keycloak's standard.token.exchange.enabled); default off";
const TOKEN_EXCHANGE_REFRESH_HELP = "no (default) or same-session: whether a token exchange may issue a refresh token of the subject token's session (Keycloak's standard.token.exchange.enableRefreshRequestedTokenType)";

/** --token-exchange-refresh: no or same-session, as Keycloak's NO and SAME_SESSION. */
function tokenExchangeRefresh(v: string): TokenExchangeRefresh {
  const x = v.toLowerCase().replace('_', '-');
  if (x === 'no') return 'NO';
  if (x === 'same-session') return 'SAME_SESSION';
  throw new InvalidArgumentError('--token-exchange-refresh takes no or same-session');
}
const FULL_SCOPE_HELP =
  "on (the default): its access tokens carry every role of their user; off: only the roles in its scope, which are its own client roles and those mapped to its scope or to the scope of one of the token's client scopes (client scope-mappings, scope scope-mappings; Keycloak's fullScopeAllowed)";
const DPOP_BOUND_HELP = "on: the token endpoint takes only this client's requests with a DPoP proof, so all its tokens are DPoP-bound (RFC 9449; Keycloak's dpop.bound.access.tokens); default off";
const REQUEST_OBJECT_HELP = "whether its authorization requests must be signed request objects (RFC 9101; Keycloak's request.object.required): not-required (default), request, request-uri (a pushed request) or request-or-request-uri";
const REQUEST_OBJECT_ALG_HELP = "the one algorithm its request objects may be signed with (Keycloak's request.object.signature.alg), or any (the default: any asymmetric one); verified with the keys of --jwks-url, --jwks-file or --certificate-file";

/** --request-object: Keycloak's request.object.required values, in the CLI's spelling (or Keycloak's own). */
function requestObjectRequired(v: string): RequestObjectRequired {
  const x = v.toLowerCase().replace(/_/g, '-');
  const m: Record<string, RequestObjectRequired> = { 'not-required': 'not required', request: 'request only', 'request-uri': 'request_uri only', 'request-or-request-uri': 'request or request_uri' };
  const found = m[x] ?? (isRequestObjectRequired(v) ? v : undefined);
  if (!found) throw new InvalidArgumentError('--request-object takes not-required, request, request-uri or request-or-request-uri');
  return found;
}
const FRONTCHANNEL_URL_HELP = "OpenID Connect Front-Channel Logout: the URL the browser loads in an invisible iframe when it ends a session the client was used in (http or https, no fragment; Keycloak's frontchannel.logout.url, and frontchannelLogout on)";
const FRONTCHANNEL_SID_HELP = 'whether iss and sid are added to the front-channel logout URL (on by default)';
const AUDIENCE_HELP = 'an audience its access tokens may name (a client id or an absolute URI, the RFC 8707 resources it may ask for; repeatable)';

/** One line per setting, as `client update` and `client show` print them. */
export function describeClient(c: Client): string {
  const lines: Array<[string, string]> = [
    ['client', `${c.clientId} (${c.public ? 'public' : 'confidential'}${c.enabled ? '' : ', disabled'})`],
    ['name', c.name ?? ''],
    ['redirect URIs', c.redirectUris.join(' ')],
    ['post-logout URIs', c.postLogoutRedirectUris.join(' ')],
    ['scopes', defaultScopesOf(c).join(' ')],
    ['optional scopes', c.optionalScopes.join(' ')],
    ['auth methods', c.authMethods.join(' ')],
    ['ID token alg', c.idTokenAlg],
    ['audiences', c.audiences.join(' ')],
    ['web origins', c.webOrigins.join(' ')],
    ['flows', [c.standardFlowEnabled ? 'code' : '', c.directAccessGrantsEnabled ? 'password' : '', c.serviceAccountsEnabled ? 'client_credentials' : ''].filter(Boolean).join(' ')],
    ['PKCE', c.public || c.pkceMethod === 'S256' ? 'required (S256)' : 'optional'],
    ['pushed requests', c.requirePushedAuthorizationRequests ? 'required (RFC 9126)' : 'optional'],
    ['request objects', `${c.requestObjectRequired === 'not required' ? 'optional' : `required: ${c.requestObjectRequired} (RFC 9101)`}, signed with ${c.requestObjectSignatureAlg ?? 'any asymmetric algorithm'}`],
    ['token exchange', c.standardTokenExchange ? `on (RFC 8693), refresh tokens: ${c.tokenExchangeRefresh === 'SAME_SESSION' ? 'same session' : 'no'}` : 'off'],
    ['DPoP', c.dpopBoundAccessTokens ? 'required (RFC 9449)' : 'optional'],
    ['full scope', c.fullScopeAllowed ? 'on (tokens carry every role of their user)' : 'off (tokens carry only the roles in its scope)'],
    ['JWT keys', jwtKeysText(c)],
    [
      'back-channel',
      c.backchannelLogout.url === null
        ? ''
        : `${c.backchannelLogout.url}${c.backchannelLogout.sessionRequired ? ' (with sid)' : ' (without sid)'}${c.backchannelLogout.revokeOfflineTokens ? ', revokes offline tokens' : ''}`,
    ],
    [
      'front-channel',
      c.frontchannelLogout.url === null
        ? c.frontchannelLogout.enabled ? 'on, no URL' : ''
        : `${c.frontchannelLogout.url}${c.frontchannelLogout.sessionRequired ? ' (with iss and sid)' : ' (without iss and sid)'}${c.frontchannelLogout.enabled ? '' : ', off'}`,
    ],
  ];
  return lines.map(([k, v]) => `${k}:${' '.repeat(18 - k.length)}${v}\n`).join('');
}

/**
 * --frontchannel-logout-url sets Keycloak's frontchannelLogout with the URL: on with a URL, off with ''
 * (a switch without a URL would do nothing here).
 */
function frontchannelOptions(o: { frontchannelLogoutUrl?: string; frontchannelLogoutSessionRequired?: boolean }): FrontchannelLogoutChange {
  return {
    ...(o.frontchannelLogoutUrl !== undefined ? { url: o.frontchannelLogoutUrl, enabled: o.frontchannelLogoutUrl !== '' } : {}),
    ...(o.frontchannelLogoutSessionRequired !== undefined ? { sessionRequired: o.frontchannelLogoutSessionRequired } : {}),
  };
}

function jwtKeysText(c: Client): string {
  if (!c.authMethods.includes('private_key_jwt')) return '';
  const source = keySource(c.jwtKeys);
  const where = !source ? 'none: set --jwks-url, --jwks-file or --certificate-file' : source.kind === 'url' ? source.url : source.kind === 'jwks' ? 'inline JWKS' : source.kind === 'certificate' ? 'certificate' : 'public key';
  return `${where}${c.jwtKeys?.signingAlg ? ` (${c.jwtKeys.signingAlg} only)` : ''}`;
}

function listChange(set: string[], add: string[], remove: string[]): ListChange | undefined {
  if (set.length === 0 && add.length === 0 && remove.length === 0) return undefined;
  return { ...(set.length > 0 ? { set } : {}), add, remove };
}

interface UpdateOptions extends JwtKeyOptions {
  requirePkce?: '' | 'S256';
  name?: string;
  redirectUri: string[];
  addRedirectUri: string[];
  removeRedirectUri: string[];
  postLogoutRedirectUri: string[];
  addPostLogoutRedirectUri: string[];
  removePostLogoutRedirectUri: string[];
  scope?: string;
  optionalScope?: string;
  enable?: boolean;
  disable?: boolean;
  authMethod: string[];
  idTokenAlg?: string;
  audience: string[];
  addAudience: string[];
  removeAudience: string[];
  webOrigin: string[];
  addWebOrigin: string[];
  removeWebOrigin: string[];
  standardFlow?: boolean;
  passwordGrant?: boolean;
  serviceAccount?: boolean;
  pkce?: '' | 'S256';
  backchannelLogoutUrl?: string;
  backchannelLogoutSessionRequired?: boolean;
  backchannelLogoutRevokeOfflineTokens?: boolean;
  requirePar?: boolean;
  tokenExchange?: boolean;
  tokenExchangeRefresh?: TokenExchangeRefresh;
  dpopBoundTokens?: boolean;
  fullScope?: boolean;
  requestObject?: RequestObjectRequired;
  requestObjectAlg?: string;
  frontchannelLogoutUrl?: string;
  frontchannelLogoutSessionRequired?: boolean;
}

const PASSWORD_GRANT_HELP = 'the password grant (RFC 6749 4.3) for this client, as kcadm and keycloak-admin-client log in';
const SERVICE_ACCOUNT_HELP = 'client_credentials (RFC 6749 4.4) as its service-account user service-account-<client-id>';

export function registerClient(program: Command): void {
  const client = program.command('client').description('manage client applications');
  client
    .command('create <realm> <client-id>')
    .description('register a client; without --secret a secret is generated and printed once (none for --auth-method private_key_jwt)')
    .option('--redirect-uri <uri>', 'an exact redirect URI to whitelist (repeatable, at least one; RFC 3986 characters only, an internationalized host is stored in ASCII form)', collect, [])
    .option('--secret <secret>', 'the client secret (default: a generated 256-bit secret)')
    .option('--scope <scopes>', "space-separated default scopes: granted when a password or client_credentials grant asks for none, profile and email implied by openid (default: the realm's scopes for new clients)")
    .option('--optional-scope <scopes>', "space-separated optional scopes: granted only when the client asks for them (Keycloak's optional client scopes; default: the realm's, without --scope)")
    .option('--public', 'a public client (no secret; must use PKCE)')
    .option('--name <name>', 'name shown to users on the login and consent pages')
    .option('--auth-method <method>', AUTH_METHOD_HELP, collect, [])
    .option('--post-logout-redirect-uri <uri>', 'where logout may send the user back (repeatable)', collect, [])
    .option('--id-token-alg <alg>', ID_TOKEN_ALG_HELP)
    .option('--audience <aud>', AUDIENCE_HELP, collect, [])
    .option('--web-origin <origin>', `${WEB_ORIGIN_HELP} (repeatable)`, collect, [])
    .option('--password-grant', PASSWORD_GRANT_HELP)
    .option('--service-account', SERVICE_ACCOUNT_HELP)
    .option('--no-standard-flow', 'no authorization code flow (a client for the password grant or client_credentials only; then no --redirect-uri is needed)')
    .option('--require-pkce', 'a confidential client must use PKCE too (public clients always must)')
    .option('--require-par <on|off>', REQUIRE_PAR_HELP, onOff('--require-par'))
    .option('--token-exchange <on|off>', TOKEN_EXCHANGE_HELP, onOff('--token-exchange'))
    .option('--request-object <required>', REQUEST_OBJECT_HELP, requestObjectRequired)
    .option('--request-object-alg <alg|any>', REQUEST_OBJECT_ALG_HELP)
    .option('--token-exchange-refresh <no|same-session>', TOKEN_EXCHANGE_REFRESH_HELP, tokenExchangeRefresh)
    .option('--dpop-bound-tokens <on|off>', DPOP_BOUND_HELP, onOff('--dpop-bound-tokens'))
    .option('--full-scope <on|off>', FULL_SCOPE_HELP, onOff('--full-scope'))
    .option('--backchannel-logout-url <url>', BACKCHANNEL_URL_HELP)
    .option('--no-backchannel-logout-session-required', 'the logout token carries no session id (sid), only the user (sub)')
    .option('--backchannel-logout-revoke-offline-tokens', BACKCHANNEL_OFFLINE_HELP)
    .option('--frontchannel-logout-url <url>', FRONTCHANNEL_URL_HELP)
    .option('--frontchannel-logout-session-required <on|off>', FRONTCHANNEL_SID_HELP, onOff('--frontchannel-logout-session-required'))
    .option('--jwks-url <url>', JWKS_URL_HELP)
    .option('--jwks-file <file>', JWKS_FILE_HELP)
    .option('--certificate-file <file>', CERTIFICATE_FILE_HELP)
    .option('--assertion-alg <alg>', ASSERTION_ALG_HELP)
    .option('--assertion-max-exp <seconds>', ASSERTION_MAX_EXP_HELP)
    .action(
      async (
        realmId: string,
        clientId: string,
        o: {
          redirectUri: string[];
          secret?: string;
          scope?: string;
          optionalScope?: string;
          public?: boolean;
          name?: string;
          authMethod: string[];
          postLogoutRedirectUri: string[];
          idTokenAlg?: string;
          audience: string[];
          passwordGrant?: boolean;
          serviceAccount?: boolean;
          standardFlow: boolean;
          requirePkce?: boolean;
          requirePar?: boolean;
          tokenExchange?: boolean;
          tokenExchangeRefresh?: TokenExchangeRefresh;
          dpopBoundTokens?: boolean;
          fullScope?: boolean;
          requestObject?: RequestObjectRequired;
          requestObjectAlg?: string;
          webOrigin: string[];
          backchannelLogoutUrl?: string;
          backchannelLogoutSessionRequired: boolean;
          backchannelLogoutRevokeOfflineTokens?: boolean;
          frontchannelLogoutUrl?: string;
          frontchannelLogoutSessionRequired?: boolean;
        } & JwtKeyOptions,
      ) => {
        if (o.secret !== undefined && !o.public) checkChosenClientSecret(o.secret);
        const jwtKeys = jwtKeysChange(o, false);
        const requestObjects = (o.requestObject !== undefined && o.requestObject !== 'not required') || (o.requestObjectAlg !== undefined && o.requestObjectAlg !== 'any');
        if (jwtKeys && !requestObjects && !o.authMethod.some((m) => m.includes('private_key_jwt'))) throw new CliError('--jwks-url, --jwks-file, --certificate-file and --assertion-* are for a client with --auth-method private_key_jwt or --request-object');
        const r = await withStore((store) =>
          createClient(store, {
            realmId,
            clientId,
            redirectUris: o.redirectUri,
            ...(o.secret !== undefined ? { secret: o.secret } : {}),
            ...(o.scope !== undefined ? { scopes: o.scope } : {}),
            ...(o.optionalScope !== undefined ? { optionalScopes: o.optionalScope } : {}),
            ...(o.public ? { public: true } : {}),
            ...(o.name ? { name: o.name } : {}),
            ...(o.authMethod.length > 0 ? { authMethods: o.authMethod } : {}),
            postLogoutRedirectUris: o.postLogoutRedirectUri,
            ...(o.idTokenAlg !== undefined ? { idTokenAlg: o.idTokenAlg } : {}),
            audiences: o.audience,
            webOrigins: o.webOrigin,
            standardFlowEnabled: o.standardFlow,
            ...(o.passwordGrant ? { directAccessGrantsEnabled: true } : {}),
            ...(o.serviceAccount ? { serviceAccountsEnabled: true } : {}),
            ...(o.requirePkce ? { pkceMethod: 'S256' as const } : {}),
            ...(o.requirePar !== undefined ? { requirePushedAuthorizationRequests: o.requirePar } : {}),
            ...(o.tokenExchange !== undefined ? { standardTokenExchange: o.tokenExchange } : {}),
            ...(o.tokenExchangeRefresh !== undefined ? { tokenExchangeRefresh: o.tokenExchangeRefresh } : {}),
            ...(o.dpopBoundTokens !== undefined ? { dpopBoundAccessTokens: o.dpopBoundTokens } : {}),
            ...(o.fullScope !== undefined ? { fullScopeAllowed: o.fullScope } : {}),
            ...(o.requestObject !== undefined ? { requestObjectRequired: o.requestObject } : {}),
            ...(o.requestObjectAlg !== undefined ? { requestObjectSignatureAlg: o.requestObjectAlg } : {}),
            backchannelLogout: {
              ...(o.backchannelLogoutUrl !== undefined ? { url: o.backchannelLogoutUrl } : {}),
              sessionRequired: o.backchannelLogoutSessionRequired,
              revokeOfflineTokens: Boolean(o.backchannelLogoutRevokeOfflineTokens),
            },
            frontchannelLogout: frontchannelOptions(o),
            ...(jwtKeys ? { jwtKeys } : {}),
          }),
        );
        process.stdout.write(`created client ${clientId} in realm ${realmId}\n`);
        // An internationalized host is stored in its ASCII form: that is the string the client must send.
        for (const uri of r.client.redirectUris) if (!o.redirectUri.includes(uri)) process.stdout.write(`redirect URI stored as ${uri}\n`);
        if (r.generated) process.stdout.write(`client secret (shown only now): ${r.secret}\n`);
        if (r.client.authMethods.includes('private_key_jwt')) process.stdout.write(`authenticates with a signed JWT (private_key_jwt), keys: ${jwtKeysText(r.client)}\n`);
        if (!r.client.fullScopeAllowed) process.stdout.write('full scope off: its tokens carry only its own client roles until roles are put in its scope (client scope-mappings add)\n');
      },
    );
  client
    .command('update <realm> <client-id>')
    .description("change a client's settings; what is not given stays as it is; prints the result")
    .option('--name <name>', "the name shown to users ('' clears it)")
    .option('--redirect-uri <uri>', 'replace the redirect URIs with these (repeatable)', collect, [])
    .option('--add-redirect-uri <uri>', 'add a redirect URI (repeatable)', collect, [])
    .option('--remove-redirect-uri <uri>', 'remove a redirect URI (repeatable)', collect, [])
    .option('--post-logout-redirect-uri <uri>', 'replace the post-logout redirect URIs with these (repeatable)', collect, [])
    .option('--add-post-logout-redirect-uri <uri>', 'add a post-logout redirect URI (repeatable)', collect, [])
    .option('--remove-post-logout-redirect-uri <uri>', 'remove a post-logout redirect URI (repeatable)', collect, [])
    .option('--scope <scopes>', "space-separated default scopes (replaces them; the optional ones stay unless named here, then they become default ones)")
    .option('--optional-scope <scopes>', "space-separated optional scopes, granted only when asked for (replaces them; '' removes them)")
    .option('--enable', 'allow the client again')
    .option('--disable', 'refuse the client everywhere (its tokens stop refreshing)')
    .option('--auth-method <method>', AUTH_METHOD_HELP.replace('; default both', '; replaces the current ones'), collect, [])
    .option('--id-token-alg <alg>', ID_TOKEN_ALG_HELP)
    .option('--audience <aud>', AUDIENCE_HELP.replace('; repeatable', '; replaces the current ones; repeatable'), collect, [])
    .option('--add-audience <aud>', 'add an audience (repeatable)', collect, [])
    .option('--remove-audience <aud>', 'remove an audience (repeatable)', collect, [])
    .option('--web-origin <origin>', `${WEB_ORIGIN_HELP} (replaces the current ones; repeatable)`, collect, [])
    .option('--add-web-origin <origin>', 'add a web origin (repeatable)', collect, [])
    .option('--remove-web-origin <origin>', 'remove a web origin (repeatable)', collect, [])
    .option('--standard-flow <on|off>', 'the authorization code flow', onOff('--standard-flow'))
    .option('--password-grant <on|off>', PASSWORD_GRANT_HELP, onOff('--password-grant'))
    .option('--service-account <on|off>', SERVICE_ACCOUNT_HELP, onOff('--service-account'))
    .option('--require-pkce <on|off>', 'whether a confidential client must use PKCE (public clients always must)', (v: string) => (onOff('--require-pkce')(v) ? 'S256' : ''))
    .option('--require-par <on|off>', REQUIRE_PAR_HELP, onOff('--require-par'))
    .option('--token-exchange <on|off>', TOKEN_EXCHANGE_HELP, onOff('--token-exchange'))
    .option('--request-object <required>', REQUEST_OBJECT_HELP, requestObjectRequired)
    .option('--request-object-alg <alg|any>', REQUEST_OBJECT_ALG_HELP)
    .option('--token-exchange-refresh <no|same-session>', TOKEN_EXCHANGE_REFRESH_HELP, tokenExchangeRefresh)
    .option('--dpop-bound-tokens <on|off>', DPOP_BOUND_HELP, onOff('--dpop-bound-tokens'))
    .option('--full-scope <on|off>', FULL_SCOPE_HELP, onOff('--full-scope'))
    .option('--backchannel-logout-url <url>', `${BACKCHANNEL_URL_HELP}; '' removes it`)
    .option('--backchannel-logout-session-required', BACKCHANNEL_SID_HELP)
    .option('--no-backchannel-logout-session-required', 'the logout token carries no session id (sid), only the user (sub)')
    .option('--backchannel-logout-revoke-offline-tokens', BACKCHANNEL_OFFLINE_HELP)
    .option('--no-backchannel-logout-revoke-offline-tokens', "a logout leaves the user's offline tokens of this client (the default)")
    .option('--frontchannel-logout-url <url>', `${FRONTCHANNEL_URL_HELP}; '' removes it and turns front-channel logout off`)
    .option('--frontchannel-logout-session-required <on|off>', FRONTCHANNEL_SID_HELP, onOff('--frontchannel-logout-session-required'))
    .option('--jwks-url <url>', JWKS_URL_HELP + "; '' stops using it")
    .option('--jwks-file <file>', JWKS_FILE_HELP)
    .option('--certificate-file <file>', CERTIFICATE_FILE_HELP)
    .option('--assertion-alg <alg>', ASSERTION_ALG_HELP + "; '' allows any")
    .option('--assertion-max-exp <seconds>', ASSERTION_MAX_EXP_HELP)
    .action(async (realmId: string, clientId: string, o: UpdateOptions) => {
      if (o.enable && o.disable) throw new CliError('give --enable or --disable, not both');
      const redirectUris = listChange(o.redirectUri, o.addRedirectUri, o.removeRedirectUri);
      const postLogoutRedirectUris = listChange(o.postLogoutRedirectUri, o.addPostLogoutRedirectUri, o.removePostLogoutRedirectUri);
      const audiences = listChange(o.audience, o.addAudience, o.removeAudience);
      const webOrigins = listChange(o.webOrigin, o.addWebOrigin, o.removeWebOrigin);
      const backchannel = {
        ...(o.backchannelLogoutUrl !== undefined ? { url: o.backchannelLogoutUrl } : {}),
        ...(o.backchannelLogoutSessionRequired !== undefined ? { sessionRequired: o.backchannelLogoutSessionRequired } : {}),
        ...(o.backchannelLogoutRevokeOfflineTokens !== undefined ? { revokeOfflineTokens: o.backchannelLogoutRevokeOfflineTokens } : {}),
      };
      const frontchannel = frontchannelOptions(o);
      const jwtKeys = jwtKeysChange(o, true);
      const { client: updated, secret } = await withStore((store) =>
        updateClientShowingSecret(store, {
          realmId,
          clientId,
          ...(o.name !== undefined ? { name: o.name } : {}),
          ...(redirectUris ? { redirectUris } : {}),
          ...(postLogoutRedirectUris ? { postLogoutRedirectUris } : {}),
          ...(o.scope !== undefined ? { scopes: o.scope } : {}),
          ...(o.optionalScope !== undefined ? { optionalScopes: o.optionalScope } : {}),
          ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}),
          ...(o.authMethod.length > 0 ? { authMethods: o.authMethod } : {}),
          ...(o.idTokenAlg !== undefined ? { idTokenAlg: o.idTokenAlg } : {}),
          ...(audiences ? { audiences } : {}),
          ...(webOrigins ? { webOrigins } : {}),
          ...(o.standardFlow !== undefined ? { standardFlowEnabled: o.standardFlow } : {}),
          ...(o.passwordGrant !== undefined ? { directAccessGrantsEnabled: o.passwordGrant } : {}),
          ...(o.serviceAccount !== undefined ? { serviceAccountsEnabled: o.serviceAccount } : {}),
          ...(o.requirePkce !== undefined ? { pkceMethod: o.requirePkce } : {}),
          ...(o.requirePar !== undefined ? { requirePushedAuthorizationRequests: o.requirePar } : {}),
          ...(o.tokenExchange !== undefined ? { standardTokenExchange: o.tokenExchange } : {}),
          ...(o.tokenExchangeRefresh !== undefined ? { tokenExchangeRefresh: o.tokenExchangeRefresh } : {}),
          ...(o.dpopBoundTokens !== undefined ? { dpopBoundAccessTokens: o.dpopBoundTokens } : {}),
          ...(o.fullScope !== undefined ? { fullScopeAllowed: o.fullScope } : {}),
          ...(o.requestObject !== undefined ? { requestObjectRequired: o.requestObject } : {}),
          ...(o.requestObjectAlg !== undefined ? { requestObjectSignatureAlg: o.requestObjectAlg } : {}),
          ...(Object.keys(backchannel).length > 0 ? { backchannelLogout: backchannel } : {}),
          ...(Object.keys(frontchannel).length > 0 ? { frontchannelLogout: frontchannel } : {}),
          ...(jwtKeys ? { jwtKeys } : {}),
        }),
      );
      process.stdout.write(`updated client ${clientId} in realm ${realmId}\n${describeClient(updated)}`);
      if (secret !== undefined) process.stdout.write(`client secret (shown only now): ${secret}\n`);
    });
  client
    .command('show <realm> <client-id>')
    .description("show a client's settings, one per line, then the roles in its scope (its scope mappings: name for a realm role, client/name for a client role); control characters shown escaped")
    .action(async (realmId: string, clientId: string) => {
      const { c, roles } = await withStore(
        async (store) => {
          if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
          const c = await store.clients.get(realmId, clientId);
          if (!c) throw new CliError(`client ${clientId} does not exist in realm ${realmId}`);
          return { c, roles: await store.roleScopes.list(realmId, { kind: 'client', id: clientId }) };
        },
        { access: 'read' },
      );
      const lines = describeClient(c).split('\n').filter((l) => l !== '');
      lines.push(`roles in scope:    ${roles.map((r) => (r.clientId === '' ? r.name : `${r.clientId}/${r.name}`)).join(' ')}`);
      process.stdout.write(lines.map((l) => `${terminalSafe(l)}\n`).join(''));
    });
  client
    .command('list <realm>')
    .description("list a realm's clients")
    .action(async (realmId: string) => {
      const clients = await withStore(async (store) => {
        if (!(await store.realms.get(realmId))) throw new CliError(`realm ${realmId} does not exist`);
        return store.clients.list(realmId);
      }, { access: 'read' });
      for (const c of clients) process.stdout.write(`${c.clientId}\t${c.public ? 'public' : 'confidential'}\t${c.redirectUris.join(' ')}${c.webOrigins.length > 0 ? `\tweb origins: ${c.webOrigins.join(' ')}` : ''}\n`);
    });
  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    client
      .command(`${name} <realm> <client-id>`)
      .description(enabled ? 'allow a disabled client again' : 'refuse the client everywhere: logins, token requests and refreshes')
      .action(async (realmId: string, clientId: string) => {
        await withStore((store) => setClientEnabled(store, { realmId, clientId, enabled }));
        process.stdout.write(`client ${clientId} in realm ${realmId} ${enabled ? 'enabled' : 'disabled'}\n`);
      });
  }
  client
    .command('delete <realm> <client-id>')
    .description('delete a client: its refresh tokens are revoked, its roles and service account removed')
    .option('--yes', 'really delete (required)')
    .action(async (realmId: string, clientId: string, o: { yes?: boolean }) => {
      if (!o.yes) throw new CliError(`deleting client ${clientId} cannot be undone: add --yes`);
      await withStore((store) => deleteClient(store, { realmId, clientId }));
      process.stdout.write(`deleted client ${clientId} from realm ${realmId}\n`);
    });
  client
    .command('rotate-secret <realm> <client-id>')
    .description('generate a new client secret and print it once; the old one is refused at once, or kept valid beside it with --keep-previous')
    .option('--keep-previous <duration>', 'keep the old secret valid this long beside the new one, so that the application can move to the new one without a failed request: seconds, or 90m, 24h, 7d (at most 30d)')
    .action(async (realmId: string, clientId: string, o: { keepPrevious?: string }) => {
      const keepPreviousSeconds = o.keepPrevious === undefined ? 0 : parseKeepPrevious(o.keepPrevious);
      const { secret, previousValidUntil } = await withStore((store) => rotateClientSecret(store, { realmId, clientId, keepPreviousSeconds }));
      process.stdout.write(`new client secret of ${clientId} (shown only now): ${secret}\n`);
      process.stdout.write(previousValidUntil === null ? 'the old secret is refused from now on\n' : `the old secret is still accepted until ${new Date(previousValidUntil * 1000).toISOString()}: refuse it sooner with \`realmgate client invalidate-previous-secret ${realmId} ${clientId}\`\n`);
    });
  client
    .command('invalidate-previous-secret <realm> <client-id>')
    .description('refuse the old secret that rotate-secret --keep-previous kept valid: only the current secret is accepted from now on')
    .action(async (realmId: string, clientId: string) => {
      const had = await withStore((store) => invalidatePreviousSecret(store, { realmId, clientId }));
      process.stdout.write(had ? `the previous secret of ${clientId} is refused from now on\n` : `${clientId} had no previous secret still valid: nothing to refuse\n`);
    });
  notBeforeOptions(
    client.command('revoke-before <realm> <client-id>').description("refuse every token issued to the client before a time (Keycloak's client not-before; the realm's revoke-before for one client); without options, show it"),
  ).action(async (realmId: string, clientId: string, o: NotBeforeOptions) => {
    await withStore((store) =>
      runNotBefore(
        o,
        `client ${clientId}`,
        async () => {
          const c = await store.clients.get(realmId, clientId);
          if (!c) throw new CliError(`client ${clientId} does not exist in realm ${realmId}`);
          return c.notBefore;
        },
        async (at) => {
          await changeClient(store, { realmId, clientId, changes: { notBefore: at } });
        },
      ),
    );
  });
  registerMapperCommands(client, 'client');
  registerScopeMappingCommands(client, 'client');
  registerInitialAccessCommands(client);
}
