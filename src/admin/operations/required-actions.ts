import type { Store } from '../../storage/store.js';
import { REQUIRED_ACTIONS, type RequiredAction, type RequiredActionSetting } from '../../storage/types.js';
import { configKeys, isConfigurableAction, isRequiredAction, readRequiredActionConfig, readRequiredActionSetting, requiredActionList, requiredActionSetting } from '../required-actions.js';
import { ConflictError, NotFound, ValidationError } from '../validation.js';
import { cliActor, recordAdminEvent, requireRealm, type Actor } from './common.js';

/** The realm's required-action settings (Keycloak's GET authentication/required-actions), by priority. */
export async function listRequiredActions(store: Store, realmId: string): Promise<{ alias: RequiredAction; setting: RequiredActionSetting }[]> {
  return requiredActionList(await requireRealm(store, realmId));
}

function requireAlias(alias: string): RequiredAction {
  if (!isRequiredAction(alias)) throw new NotFound(`required action ${JSON.stringify(alias.slice(0, 64))} is not one Realmgate acts on`);
  return alias;
}

/** One action's settings (Keycloak's GET authentication/required-actions/{alias}). */
export async function getRequiredAction(store: Store, realmId: string, alias: string): Promise<RequiredActionSetting> {
  return requiredActionSetting(await requireRealm(store, realmId), requireAlias(alias));
}

function refuseIgnored(alias: RequiredAction, ignored: string[]): void {
  const takes = configKeys(alias);
  if (ignored.length > 0) throw new ValidationError(`config ${ignored.map((k) => JSON.stringify(k.slice(0, 64))).join(', ')} not supported: ${alias} ${takes.length > 0 ? `takes ${takes.join(' and ')}` : 'takes no config'}`);
}

/**
 * Keycloak 25's authentication/required-actions/{alias}/config (GET, PUT, DELETE): the action's config
 * alone. An alias Realmgate does not act on, or delete_account (no config in Keycloak either), is
 * Keycloak's 400 "RequiredAction is not configurable"; PUT
 * replaces the whole config, DELETE empties it.
 */
function configurableAlias(alias: string): RequiredAction {
  if (!isConfigurableAction(alias)) throw new ValidationError('RequiredAction is not configurable');
  return alias;
}

export async function getRequiredActionConfig(store: Store, realmId: string, alias: string): Promise<Record<string, string>> {
  return { ...requiredActionSetting(await requireRealm(store, realmId), configurableAlias(alias)).config };
}

export async function setRequiredActionConfig(store: Store, input: { realmId: string; alias: string; config: unknown }, actor: Actor = cliActor()): Promise<Record<string, string>> {
  const alias = configurableAlias(input.alias);
  const { config, ignored } = readRequiredActionConfig(alias, input.config ?? {});
  refuseIgnored(alias, ignored);
  await writeConfig(store, input.realmId, alias, config, actor);
  return config;
}

export async function removeRequiredActionConfig(store: Store, input: { realmId: string; alias: string }, actor: Actor = cliActor()): Promise<void> {
  await writeConfig(store, input.realmId, configurableAlias(input.alias), undefined, actor);
}

/** Stores `config` as the action's (undefined: none, an admin event DELETE). */
async function writeConfig(store: Store, realmId: string, alias: RequiredAction, config: Record<string, string> | undefined, actor: Actor): Promise<void> {
  const realm = await requireRealm(store, realmId);
  const setting = { ...requiredActionSetting(realm, alias), config: config ?? {} };
  await store.realms.update(realm.id, { requiredActionSettings: { ...realm.requiredActionSettings, [alias]: setting } });
  await recordAdminEvent(store, actor, {
    realmId: realm.id,
    operation: config ? 'UPDATE' : 'DELETE',
    resourceType: 'REQUIRED_ACTION_CONFIG',
    resourcePath: `authentication/required-actions/${alias}/config`,
    ...(config ? { representation: { config } } : {}),
  });
}

/**
 * Changes one action's settings (Keycloak's PUT authentication/required-actions/{alias}): enabled,
 * defaultAction, priority, config (max_auth_age; TERMS_AND_CONDITIONS' terms_text); absent fields keep theirs.
 */
export async function updateRequiredAction(store: Store, input: { realmId: string; alias: string; changes: Record<string, unknown> }, actor: Actor = cliActor()): Promise<RequiredActionSetting> {
  const realm = await requireRealm(store, input.realmId);
  const alias = requireAlias(input.alias);
  const { setting, ignored } = readRequiredActionSetting(alias, input.changes, requiredActionSetting(realm, alias));
  refuseIgnored(alias, ignored);
  await store.realms.update(realm.id, { requiredActionSettings: { ...realm.requiredActionSettings, [alias]: setting } });
  await recordAdminEvent(store, actor, { realmId: realm.id, operation: 'UPDATE', resourceType: 'REQUIRED_ACTION', resourcePath: `authentication/required-actions/${alias}`, representation: { alias, ...setting } });
  return setting;
}

/**
 * Keycloak's POST authentication/required-actions/{alias}/raise-priority and lower-priority: the action
 * trades priorities with the one asked just before it (raise) or just after it (lower). The first one
 * raised, or the last one lowered, stays (Keycloak answers 204 and changes nothing). Two actions of the
 * same priority are asked in Realmgate's order; moving one past the other gives the one now second a
 * priority one higher.
 */
export async function moveRequiredAction(store: Store, input: { realmId: string; alias: string; direction: 'raise' | 'lower' }, actor: Actor = cliActor()): Promise<void> {
  const realm = await requireRealm(store, input.realmId);
  const alias = requireAlias(input.alias);
  const list = requiredActionList(realm);
  const i = list.findIndex((a) => a.alias === alias);
  const j = input.direction === 'raise' ? i - 1 : i + 1;
  const [first, second] = input.direction === 'raise' ? [list[i], list[j]] : [list[j], list[i]];
  if (!first || !second) return;
  // `first` comes before `second` from now on.
  let [pFirst, pSecond] = [second.setting.priority, first.setting.priority];
  if (pFirst === pSecond) pSecond = Math.min(pFirst + 1, 1_000_000);
  await store.realms.update(realm.id, {
    requiredActionSettings: { ...realm.requiredActionSettings, [first.alias]: { ...first.setting, priority: pFirst }, [second.alias]: { ...second.setting, priority: pSecond } },
  });
  await recordAdminEvent(store, actor, { realmId: realm.id, operation: 'UPDATE', resourceType: 'REQUIRED_ACTION', resourcePath: `authentication/required-actions/${alias}/${input.direction}-priority` });
}

/**
 * Registration of required action providers (Keycloak's unregistered-required-actions,
 * register-required-action, DELETE required-actions/{alias}): Realmgate's seven are built in and
 * registered in every realm, and no other provider exists. So none is unregistered, registering one of
 * them is a conflict, any other a ValidationError, and none can be unregistered (disable it instead).
 */
export async function unregisteredRequiredActions(store: Store, realmId: string): Promise<never[]> {
  await requireRealm(store, realmId);
  return [];
}

export async function registerRequiredActionProvider(store: Store, input: { realmId: string; providerId: unknown }): Promise<never> {
  await requireRealm(store, input.realmId);
  if (typeof input.providerId === 'string' && isRequiredAction(input.providerId)) throw new ConflictError(`Required action ${input.providerId} is already registered`);
  throw new ValidationError(`No provider found for providerId: Realmgate's required actions are built in (${REQUIRED_ACTIONS.join(', ')})`);
}

export async function unregisterRequiredAction(store: Store, input: { realmId: string; alias: string }): Promise<never> {
  const alias = requireAlias(input.alias);
  await requireRealm(store, input.realmId);
  throw new ValidationError(`${alias} is built in and cannot be unregistered: disable it instead (PUT with enabled false)`);
}
