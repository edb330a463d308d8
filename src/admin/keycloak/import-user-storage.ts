import { randomUUID } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import type { UserStorageMapper } from '../../storage/types.js';
import { ValidationError } from '../validation.js';
import { createUserStorage, readConfigMap, SUPPORTED_MAPPERS, USER_STORAGE_TYPE, LDAP_MAPPER_TYPE, validateComponentShape, type ComponentFields } from '../operations/user-storage.js';
import type { Actor } from '../operations/common.js';
import type { RealmReportBuilder } from './import-report.js';
import { describeMapper, mapperProblems } from '../../oauth/ldap/mapper-config.js';

type Json = Record<string, unknown>;

/** An LDAP provider of the file, checked (no database): ready to store, or why not. */
export interface FileUserStorage {
  element: string;
  fields?: ComponentFields;
  refused?: string;
  notes: string[];
}

const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Keycloak's Kerberos options of an LDAP provider, which Realmgate does not act on. */
const KERBEROS_KEYS = ['allowKerberosAuthentication', 'useKerberosForPasswordAuthentication'];

/**
 * The file's user federation components (components["org.keycloak.storage.UserStorageProvider"]):
 * "ldap" ones with their mapper subcomponents (attribute, group, role, hardcoded, full name: each group,
 * role and hardcoded one named in the report with what it does); other mappers and Kerberos are named as
 * skipped; other providers (kerberos, custom SPIs) are skipped.
 */
export function readFileUserStorage(rep: Json): FileUserStorage[] {
  return list(obj(rep.components)[USER_STORAGE_TYPE]).map((raw, i) => {
    const c = obj(raw);
    const name = str(c.name) ?? `#${i}`;
    const element = `user federation ${name}`;
    const notes: string[] = [];
    if (str(c.providerId) !== 'ldap') return { element, notes, refused: `provider ${JSON.stringify(c.providerId)} is not supported (Realmgate federates users from LDAP only)` };
    try {
      const config = readConfigMap(c.config);
      if (config.bindCredential?.[0] === '**********') {
        return { element, notes, refused: 'its bindCredential is masked in the file (an export without secrets): export with secrets, or create the provider again (realmgate ldap add)' };
      }
      const mappers: UserStorageMapper[] = [];
      for (const m of list(obj(c.subComponents)[LDAP_MAPPER_TYPE]).map(obj)) {
        const mapper: UserStorageMapper = { id: str(m.id) ?? '', name: str(m.name) ?? '', providerId: str(m.providerId) ?? '', config: readConfigMap(m.config, `mapper ${str(m.name) ?? ''} config`) };
        if (!SUPPORTED_MAPPERS.includes(mapper.providerId)) {
          notes.push(`mapper ${mapper.name} (${mapper.providerId}) skipped: not supported`);
          continue;
        }
        // A mapper Realmgate cannot act on is left out, not the provider with it.
        const problems = mapperProblems(mapper);
        if (problems.length > 0) {
          notes.push(`mapper ${mapper.name} (${mapper.providerId}) skipped: ${problems.join('; ')}`);
          continue;
        }
        if (mapper.config['is.binary.attribute']?.[0] === 'true') notes.push(`mapper ${mapper.name}: a binary attribute, not copied to the user`);
        if (mapper.providerId !== 'user-attribute-ldap-mapper') {
          const ignored = mapper.config['mapped.group.attributes']?.[0] ? ' (mapped.group.attributes ignored)' : '';
          notes.push(`mapper ${mapper.name} (${mapper.providerId}): ${describeMapper(mapper)}${ignored}`);
        }
        if (!/^[A-Za-z0-9._-]{1,36}$/.test(mapper.id)) mapper.id = randomUUID();
        mappers.push(mapper);
      }
      for (const k of KERBEROS_KEYS) if (config[k]?.[0] === 'true') notes.push(`${k} skipped: Kerberos is not supported`);
      if (config.editMode?.[0] === 'WRITABLE') notes.push('editMode WRITABLE: password changes are written to the directory (usePasswordModifyExtendedOp: RFC 3062); profile changes are not');
      if (Number(config.fullSyncPeriod?.[0] ?? -1) > 0 || Number(config.changedSyncPeriod?.[0] ?? -1) > 0) notes.push('periodic synchronization skipped: users are imported at their first sign-in');
      if (config.enabled?.[0] === 'false') notes.push('disabled, as in Keycloak');
      const fields: ComponentFields = { ...(str(c.id) ? { id: str(c.id)! } : {}), name, providerId: 'ldap', config, mappers };
      validateComponentShape(fields);
      return { element, notes, fields };
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return { element, notes, refused: err.message };
    }
  });
}

/** The ids a user's federationLink may name: the file's providers that can be imported. */
export function importableIds(entries: FileUserStorage[]): Set<string> {
  return new Set(entries.filter((e) => e.fields?.id).map((e) => e.fields!.id!));
}

/** Stores the file's providers (their ids kept: users' federationLink names them), each reported. */
export async function storeFileUserStorage(store: Store, realmId: string, entries: FileUserStorage[], report: RealmReportBuilder, actor: Actor): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const e of entries) {
    if (!e.fields) {
      report.skipped(e.element, e.refused ?? 'not usable');
      continue;
    }
    if (e.fields.id && (await store.userStorage.get(realmId, e.fields.id))) {
      report.skipped(e.element, 'a provider with this id exists already');
      continue;
    }
    try {
      const p = await createUserStorage(store, { ...actor, via: 'import' }, realmId, e.fields);
      stored.add(p.id);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      report.skipped(e.element, err.message);
      continue;
    }
    const note = ['LDAP sign-in; bindCredential sealed', ...e.notes].join('; ');
    if (e.notes.length > 0) report.mapped(e.element, note);
    else report.imported(e.element, note);
  }
  return stored;
}
