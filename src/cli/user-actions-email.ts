import type { Command } from 'commander';
import { CliError, collect, config, intArg, withStore } from './common.js';
import { createServices } from '../services.js';
import { systemClock } from '../clock.js';
import { sendActionsEmail, MAX_ACTION_LIFESPAN_S } from '../admin/operations/action-emails.js';
import { sendVerifyEmail } from '../admin/operations/email-verification.js';
import { MailError } from '../mail/mailer.js';
import { terminalSafe } from './terminal-text.js';

/** `user send-actions-email`: Keycloak's execute-actions-email from the command line. */
export function registerUserActionsEmail(user: Command): void {
  user
    .command('send-actions-email <realm> <user>')
    .description("mail the user a link to do required actions (Keycloak's execute-actions-email), through the realm's SMTP server")
    .requiredOption('--action <action>', 'UPDATE_PASSWORD, CONFIGURE_TOTP, TERMS_AND_CONDITIONS, UPDATE_PROFILE or VERIFY_EMAIL (repeatable; done in that order)', collect)
    .option('--lifespan <s>', "how long the link works, in seconds (default: the realm's --admin-action-token-lifespan, 43200)", intArg('lifespan', { min: 1, max: MAX_ACTION_LIFESPAN_S }))
    .option('--client-id <client>', 'the client whose redirect URI the user goes to when done')
    .option('--redirect-uri <uri>', "where the user goes when done: one of the client's registered redirect URIs")
    .action(async (realmId: string, ref: string, o: { action: string[]; lifespan?: number; clientId?: string; redirectUri?: string }) => {
      const cfg = config();
      const warnings: string[] = [];
      const sent = await withStore(async (store) => {
        try {
          return await sendActionsEmail(createServices(cfg, store, systemClock), {
            realmId,
            user: ref,
            actions: o.action,
            ...(o.lifespan !== undefined ? { lifespan: o.lifespan } : {}),
            ...(o.clientId !== undefined ? { clientId: o.clientId } : {}),
            ...(o.redirectUri !== undefined ? { redirectUri: o.redirectUri } : {}),
            log: { warn: (_obj: object, msg: string) => warnings.push(msg) },
          });
        } catch (err) {
          if (err instanceof MailError) throw new CliError(`the mail was not sent: ${err.message}`);
          throw err;
        }
      });
      process.stdout.write(`mailed ${terminalSafe(sent.email ?? '')} a link to ${o.action.join(', ')}\n`);
    });

  user
    .command('send-verify-email <realm> <user>')
    .description("mail the user a link that verifies their email address (Keycloak's send-verify-email), through the realm's SMTP server")
    .option('--lifespan <s>', "how long the link works, in seconds (default: the realm's --admin-action-token-lifespan, 43200)", intArg('lifespan', { min: 1, max: MAX_ACTION_LIFESPAN_S }))
    .option('--client-id <client>', 'the client whose redirect URI the user goes to when done')
    .option('--redirect-uri <uri>', "where the user goes when done: one of the client's registered redirect URIs")
    .action(async (realmId: string, ref: string, o: { lifespan?: number; clientId?: string; redirectUri?: string }) => {
      const cfg = config();
      const sent = await withStore(async (store) => {
        try {
          return await sendVerifyEmail(createServices(cfg, store, systemClock), {
            realmId,
            user: ref,
            ...(o.lifespan !== undefined ? { lifespan: o.lifespan } : {}),
            ...(o.clientId !== undefined ? { clientId: o.clientId } : {}),
            ...(o.redirectUri !== undefined ? { redirectUri: o.redirectUri } : {}),
            log: { warn: () => undefined },
          });
        } catch (err) {
          if (err instanceof MailError) throw new CliError(`the mail was not sent: ${err.message}`);
          throw err;
        }
      });
      process.stdout.write(`mailed ${terminalSafe(sent.email ?? '')} a link to verify it\n`);
    });
}
