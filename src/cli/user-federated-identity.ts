import type { Command } from 'commander';
import { withStore } from './common.js';
import { terminalJson, terminalSafe } from './terminal-text.js';
import { cliActor } from '../admin/operations/common.js';
import { requireUser } from '../admin/operations/users.js';
import { linkFederatedIdentity, listFederatedIdentities, unlinkFederatedIdentity } from '../admin/operations/identity-providers.js';

function time(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** `user federated-identity list|link|unlink`: a user's accounts at identity providers (Keycloak's federated identities). */
export function registerUserFederatedIdentity(user: Command): void {
  const fi = user
    .command('federated-identity')
    .description("a user's linked accounts at identity providers (Keycloak's federated identities): signing in there signs in as the user");
  fi.command('list <realm> <user>')
    .description("list a user's linked accounts (by username or id): provider alias, user id at the provider, username at the provider, linked at")
    .option('--json', "one JSON object per line (Keycloak's FederatedIdentityRepresentation: identityProvider, userId, userName; and created)")
    .action(async (realmId: string, ref: string, o: { json?: boolean }) => {
      const links = await withStore(async (store) => listFederatedIdentities(store, await requireUser(store, realmId, ref)), { access: 'read' });
      for (const l of links) {
        if (o.json) process.stdout.write(`${terminalJson({ identityProvider: l.identityProvider, userId: l.federatedUserId, userName: l.federatedUsername ?? l.federatedUserId, created: time(l.createdAt) })}\n`);
        else process.stdout.write(`${l.identityProvider}\t${terminalSafe(l.federatedUserId)}\t${terminalSafe(l.federatedUsername ?? '')}\t${time(l.createdAt)}\n`);
      }
    });
  fi.command('link <realm> <user>')
    .description('link a user (by username or id) to their account at a provider: signing in there then signs in as this user (refused when either is linked already)')
    .requiredOption('--provider <alias>', 'the identity provider')
    .requiredOption('--provider-user-id <id>', "the account's id at the provider (the sub claim of its ID tokens)")
    .option('--provider-username <name>', "the account's username at the provider (shown only)")
    .action(async (realmId: string, ref: string, o: { provider: string; providerUserId: string; providerUsername?: string }) => {
      const username = await withStore(async (store) => {
        const u = await requireUser(store, realmId, ref);
        await linkFederatedIdentity(store, cliActor(), u, o.provider, { userId: o.providerUserId, userName: o.providerUsername ?? null });
        return u.username;
      });
      process.stdout.write(`linked ${terminalSafe(username)} to the ${o.provider} account ${terminalSafe(o.providerUserId)} in realm ${realmId}\n`);
    });
  fi.command('unlink <realm> <user>')
    .description("remove a user's link to a provider: signing in there no longer signs in as this user (the user and the account at the provider stay)")
    .requiredOption('--provider <alias>', 'the identity provider')
    .action(async (realmId: string, ref: string, o: { provider: string }) => {
      const username = await withStore(async (store) => {
        const u = await requireUser(store, realmId, ref);
        await unlinkFederatedIdentity(store, cliActor(), u, o.provider);
        return u.username;
      });
      process.stdout.write(`unlinked ${terminalSafe(username)} from ${terminalSafe(o.provider)} in realm ${realmId}\n`);
    });
}
