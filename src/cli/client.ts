import { Option, type Command } from 'commander';
import { collect, withStore } from './common.js';
import { createClient } from '../admin/operations.js';

export function registerClient(program: Command): void {
  const client = program.command('client').description('manage client applications');
  client
    .command('create <realm> <client-id>')
    .description('register a client; without --secret a secret is generated and printed once')
    .option('--redirect-uri <uri>', 'an exact redirect URI to whitelist (repeatable, at least one; RFC 3986 characters only, an internationalized host is stored in ASCII form)', collect, [])
    .option('--secret <secret>', 'the client secret (default: a generated 256-bit secret)')
    .option('--scope <scopes>', 'space-separated scopes the client may request (default: all default scopes)')
    .option('--public', 'a public client (no secret; must use PKCE)')
    .option('--name <name>', 'name shown to users on the login and consent pages')
    .addOption(new Option('--auth-method <method>', 'token endpoint authentication (default client_secret_basic)').choices(['client_secret_basic', 'client_secret_post']))
    .option('--post-logout-redirect-uri <uri>', 'where logout may send the user back (repeatable)', collect, [])
    .action(async (realmId: string, clientId: string, o: { redirectUri: string[]; secret?: string; scope?: string; public?: boolean; name?: string; authMethod?: string; postLogoutRedirectUri: string[] }) => {
      const r = await withStore((store) =>
        createClient(store, {
          realmId,
          clientId,
          redirectUris: o.redirectUri,
          ...(o.secret !== undefined ? { secret: o.secret } : {}),
          ...(o.scope !== undefined ? { scopes: o.scope } : {}),
          ...(o.public ? { public: true } : {}),
          ...(o.name ? { name: o.name } : {}),
          ...(o.authMethod ? { authMethod: o.authMethod } : {}),
          postLogoutRedirectUris: o.postLogoutRedirectUri,
        }),
      );
      process.stdout.write(`created client ${clientId} in realm ${realmId}\n`);
      // An internationalized host is stored in its ASCII form: that is the string the client must send.
      for (const uri of r.client.redirectUris) if (!o.redirectUri.includes(uri)) process.stdout.write(`redirect URI stored as ${uri}\n`);
      if (r.generated) process.stdout.write(`client secret (shown only now): ${r.secret}\n`);
    });
  client
    .command('list <realm>')
    .description("list a realm's clients")
    .action(async (realmId: string) => {
      const clients = await withStore((store) => store.clients.list(realmId));
      for (const c of clients) process.stdout.write(`${c.clientId}\t${c.public ? 'public' : 'confidential'}\t${c.redirectUris.join(' ')}\n`);
    });
}
