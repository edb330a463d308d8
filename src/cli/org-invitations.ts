import type { Command } from 'commander';
import { CliError, config, withStore } from './common.js';
import { createServices, type Services } from '../services.js';
import { systemClock, nowSeconds } from '../clock.js';
import type { Store } from '../storage/store.js';
import { deleteInvitation, inviteExistingUser, inviteUser, listInvitations, toInvitationRepresentation } from '../admin/operations/invitations.js';
import { MailError } from '../mail/mailer.js';
import { terminalSafe } from './terminal-text.js';

/** Runs `fn` with the server's services over the store; a mail the server did not take is a CLI error. */
function withServices<T>(fn: (services: Services) => Promise<T>, o: { access?: 'read' } = {}): Promise<T> {
  const cfg = config();
  return withStore(async (store: Store) => {
    try {
      return await fn(createServices(cfg, store, systemClock));
    } catch (err) {
      if (err instanceof MailError) throw new CliError(`the invitation was not sent: ${err.message}`);
      throw err;
    }
  }, o);
}

const log = { warn: (): void => undefined };

/** `org invite|invitations|invitation delete`: Keycloak 26's organization invitations from the command line. */
export function registerOrgInvitations(org: Command): void {
  org
    .command('invite <realm> <org>')
    .addHelpText('after', "\nThe organization is given by alias or id. The link is mailed through the realm's SMTP server and lasts the\nrealm's --admin-action-token-lifespan; a user of the realm with that email is asked to accept (after signing\nin), anyone else to register with it. Each invitation works once.")
    .description("mail an invitation into an organization: --email (its user accepts, anyone else registers) or --user")
    .option('--email <email>', 'the address to invite')
    .option('--first-name <name>', 'first name of a new user (prefilled on the registration page)')
    .option('--last-name <name>', 'last name of a new user')
    .option('--user <user>', 'an existing user (username or id), invited at the email they have')
    .action(async (realmId: string, ref: string, o: { email?: string; firstName?: string; lastName?: string; user?: string }) => {
      if ((o.email === undefined) === (o.user === undefined)) throw new CliError('give either --email or --user');
      const inv = await withServices((services) =>
        o.user !== undefined
          ? inviteExistingUser(services, { realmId, organization: ref, user: o.user, log })
          : inviteUser(services, { realmId, organization: ref, email: o.email, ...(o.firstName !== undefined ? { firstName: o.firstName } : {}), ...(o.lastName !== undefined ? { lastName: o.lastName } : {}), log }),
      );
      process.stdout.write(`invited ${terminalSafe(inv.email)} to ${ref} (invitation ${inv.id})\n`);
    });
  org
    .command('invitations <realm> <org>')
    .description("list an organization's invitations (id, email, PENDING or EXPIRED, expiry)")
    .option('--status <status>', 'PENDING or EXPIRED only')
    .action(async (realmId: string, ref: string, o: { status?: string }) => {
      if (o.status !== undefined && o.status !== 'PENDING' && o.status !== 'EXPIRED') throw new CliError('--status must be PENDING or EXPIRED');
      const list = await withServices((services) => listInvitations(services, { realmId, organization: ref, max: 1000, ...(o.status ? { status: o.status as 'PENDING' | 'EXPIRED' } : {}) }), { access: 'read' });
      const now = nowSeconds(systemClock);
      for (const inv of list) {
        const r = toInvitationRepresentation(inv, now);
        process.stdout.write(`${inv.id}\t${terminalSafe(inv.email)}\t${String(r.status)}\t${new Date(inv.expiresAt * 1000).toISOString()}\n`);
      }
    });
  const invitation = org.command('invitation').description("manage one of an organization's invitations");
  invitation
    .command('delete <realm> <org> <id>')
    .description('delete an invitation: its link stops working')
    .action(async (realmId: string, ref: string, id: string) => {
      await withServices((services) => deleteInvitation(services, { realmId, organization: ref, invitation: id }));
      process.stdout.write(`deleted invitation ${id}\n`);
    });
}
