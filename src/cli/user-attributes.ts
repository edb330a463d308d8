import { CliError } from './common.js';
import { ROOT_USER_PROPERTIES } from '../admin/validation.js';
import type { UserAttributes } from '../storage/types.js';

/** The option of each root property, which `--attribute` does not set (Keycloak keeps them out of attributes). */
const ROOT_OPTION: Record<string, string> = { username: 'the username argument', email: '--email', firstName: '--first-name', lastName: '--last-name' };

export const ATTRIBUTE_HELP = 'set attribute NAME to VALUE (repeatable; the same NAME again adds a value), as Keycloak user attributes: the profile, phone and address scopes release some as standard claims';

/** `--attribute NAME=VALUE` options as attributes: a name given again gets several values, in order. */
export function attributesFrom(pairs: readonly string[]): UserAttributes {
  const out = new Map<string, string[]>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`--attribute takes NAME=VALUE, not ${JSON.stringify(pair.length > 64 ? `${pair.slice(0, 64)}...` : pair)}`);
    const name = pair.slice(0, eq);
    if (ROOT_USER_PROPERTIES.includes(name)) throw new CliError(`${name} is not an attribute: use ${ROOT_OPTION[name]}`);
    out.set(name, [...(out.get(name) ?? []), pair.slice(eq + 1)]);
  }
  return Object.fromEntries(out);
}
