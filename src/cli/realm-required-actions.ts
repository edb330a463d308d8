import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CliError, intArg, onOff, withStore } from './common.js';
import { terminalSafe } from './terminal-text.js';
import { getRequiredAction, listRequiredActions, updateRequiredAction } from '../admin/operations/required-actions.js';
import { MAX_AUTH_AGE, REQUIRED_ACTION_NAMES, TERMS_TEXT } from '../admin/required-actions.js';

/** `realm required-actions` and `realm required-action`: Keycloak's required-action settings of a realm. */
export function registerRealmRequiredActions(realm: Command): void {
  realm
    .command('required-actions <realm>')
    .description("list the required actions Realmgate acts on with the realm's settings (enabled, default action for new users, priority), in the order they are asked")
    .action(async (realmId: string) => {
      const list = await withStore((store) => listRequiredActions(store, realmId));
      for (const a of list) {
        const s = a.setting;
        process.stdout.write(`${a.alias.padEnd(31)} ${(s.enabled ? 'enabled' : 'disabled').padEnd(9)} ${(s.defaultAction ? 'default' : '-').padEnd(8)} ${`priority ${s.priority}`.padEnd(14)} ${REQUIRED_ACTION_NAMES[a.alias]}${s.config[MAX_AUTH_AGE] !== undefined ? ` (max auth age ${s.config[MAX_AUTH_AGE]} s)` : ''}${s.config[TERMS_TEXT] ? ' (terms text set)' : ''}\n`);
      }
    });
  realm
    .command('required-action <realm> <alias>')
    .description(
      "change one required action's settings (Keycloak's PUT authentication/required-actions/{alias}): disabled, it is not asked (users keep it) nor taken as kc_action; a default action is given to every new user (admin API, CLI, console, registration, identity provider, LDAP)",
    )
    .option('--enabled <on|off>', 'whether the action is asked', onOff('--enabled'))
    .option('--default-action <on|off>', 'whether every new user of the realm gets it', onOff('--default-action'))
    .option('--priority <n>', 'lower first: the order pending actions are asked in', intArg('priority', { min: 0, max: 1_000_000 }))
    .option('--terms-text <text>', 'TERMS_AND_CONDITIONS: the terms the page shows (plain text; a blank line between paragraphs; "" restores the default text)')
    .option('--terms-file <path>', 'TERMS_AND_CONDITIONS: the terms, read from a UTF-8 text file')
    .option(
      '--max-auth-age <seconds|default>',
      `Keycloak's max_auth_age: how long after signing in a user may be sent to this action by an application (kc_action) without signing in again; 0: always sign in again; default: 300`,
    )
    .action(async (realmId: string, alias: string, o: { enabled?: boolean; defaultAction?: boolean; priority?: number; termsText?: string; termsFile?: string; maxAuthAge?: string }) => {
      if (o.termsText !== undefined && o.termsFile !== undefined) throw new CliError('use either --terms-text or --terms-file, not both');
      let text = o.termsText;
      if (o.termsFile !== undefined) {
        try {
          text = await readFile(o.termsFile, 'utf8');
        } catch (err) {
          throw new CliError(`cannot read ${o.termsFile}: ${(err as Error).message}`);
        }
      }
      if (text !== undefined && alias !== 'TERMS_AND_CONDITIONS') throw new CliError('--terms-text and --terms-file belong to TERMS_AND_CONDITIONS');
      const s = await withStore(async (store) => {
        // The config is replaced whole (as Keycloak's PUT does): the keys not given keep their values.
        const config =
          text !== undefined || o.maxAuthAge !== undefined
            ? { ...(await getRequiredAction(store, realmId, alias)).config, ...(text !== undefined ? { [TERMS_TEXT]: text } : {}), ...(o.maxAuthAge !== undefined ? { [MAX_AUTH_AGE]: o.maxAuthAge === 'default' ? '' : o.maxAuthAge } : {}) }
            : undefined;
        const changes = {
          ...(o.enabled !== undefined ? { enabled: o.enabled } : {}),
          ...(o.defaultAction !== undefined ? { defaultAction: o.defaultAction } : {}),
          ...(o.priority !== undefined ? { priority: o.priority } : {}),
          ...(config !== undefined ? { config } : {}),
        };
        if (Object.keys(changes).length === 0) throw new CliError('nothing to change: give --enabled, --default-action, --priority, --max-auth-age or --terms-text');
        return updateRequiredAction(store, { realmId, alias, changes });
      });
      process.stdout.write(`required action ${terminalSafe(alias)} in realm ${realmId}: ${s.enabled ? 'enabled' : 'disabled'}${s.defaultAction ? ', default action' : ''}, priority ${s.priority}${s.config[MAX_AUTH_AGE] !== undefined ? `, max auth age ${s.config[MAX_AUTH_AGE]} s` : ''}\n`);
    });
}
