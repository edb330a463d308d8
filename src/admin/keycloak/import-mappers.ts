import type { Store } from '../../storage/store.js';
import type { MapperOwner } from '../../storage/repos/protocol-mappers.js';
import { ATTRIBUTE_MAPPER, CLIENT_ROLE_MAPPER, GROUP_MAPPER, MAPPER_TYPES, PROPERTY_MAPPER, REALM_ROLE_MAPPER, SESSION_NOTES, SESSION_NOTE_MAPPER } from '../../oauth/protocol-mappers.js';
import { checkMapper, storeMappers, type CheckedMapper } from '../operations/protocol-mappers.js';
import { fromProtocolMapperRepresentation, type MapperFields } from './representations/protocol-mapper.js';
import { ValidationError } from '../validation.js';
import type { RealmReportBuilder } from './import-report.js';

type Json = Record<string, unknown>;

/** The protocol mappers of a client or scope in a Keycloak file: those to move, and what the report says of the others. */
export interface FileMappers {
  movable: Array<{ name: string; fields?: MapperFields; refused?: string }>;
  /** The owner's report line says these (none: undefined). */
  note: string | undefined;
}

/**
 * The mappers Keycloak puts in its standard scopes, which a realm's export carries whether or not a user
 * has the attribute: scope -> "type source -> claim.name". They are not moved: Realmgate's scopes release
 * these claims already (oauth/tokens.ts: the profile, email, phone scopes and the role claims), as these
 * mappers do. (The microprofile-jwt scope's upn and groups are not Realmgate's: they move.)
 */
const KEYCLOAK_DEFAULTS: Record<string, ReadonlySet<string>> = Object.fromEntries(
  Object.entries({
    profile: [
      ...['profile', 'birthdate', 'locale', 'gender', 'nickname', 'website', 'picture', 'zoneinfo'].map((a) => `${ATTRIBUTE_MAPPER} ${a} ${a}`),
      `${ATTRIBUTE_MAPPER} updatedAt updated_at`,
      `${ATTRIBUTE_MAPPER} middleName middle_name`,
      `${PROPERTY_MAPPER} username preferred_username`,
      `${PROPERTY_MAPPER} firstName given_name`,
      `${PROPERTY_MAPPER} lastName family_name`,
    ],
    email: [`${PROPERTY_MAPPER} email email`, `${PROPERTY_MAPPER} emailVerified email_verified`],
    phone: [`${ATTRIBUTE_MAPPER} phoneNumber phone_number`, `${ATTRIBUTE_MAPPER} phoneNumberVerified phone_number_verified`],
    roles: [`${REALM_ROLE_MAPPER}  realm_access.roles`, `${CLIENT_ROLE_MAPPER}  resource_access.\${client_id}.roles`],
    // auth_time in ID tokens; client_id in client credentials tokens (Keycloak's service account notes).
    basic: [`${SESSION_NOTE_MAPPER} AUTH_TIME auth_time`],
    service_account: [`${SESSION_NOTE_MAPPER} client_id client_id`],
  }).map(([scope, list]) => [scope, new Set(list)]),
);

function isKeycloakDefault(scopeName: string | undefined, m: Json, config: Json): boolean {
  if (scopeName === undefined || !Object.hasOwn(KEYCLOAK_DEFAULTS, scopeName)) return false;
  // The role mappers read no user.attribute (Keycloak's export says "foo"): their source is the roles.
  const role = m.protocolMapper === REALM_ROLE_MAPPER || m.protocolMapper === CLIENT_ROLE_MAPPER;
  const source = role ? '' : m.protocolMapper === SESSION_NOTE_MAPPER ? config['user.session.note'] : config['user.attribute'];
  return KEYCLOAK_DEFAULTS[scopeName]!.has(`${String(m.protocolMapper)} ${String(source)} ${String(config['claim.name'])}`);
}

const objectOr = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/**
 * Sorts the protocolMappers of a client (scopeName undefined) or scope: the types Realmgate runs move
 * (checked when stored); Keycloak's group membership mapper of a scope named groups is Realmgate's own
 * groups claim; Keycloak's defaults in the standard scopes, and the types Realmgate does not run, do not move.
 */
export function readFileMappers(list: unknown[], scopeName: string | undefined): FileMappers {
  const movable: FileMappers['movable'] = [];
  const notes: string[] = [];
  let others = 0;
  const unkept: string[] = [];
  for (const raw of list) {
    const m = objectOr(raw);
    const config = objectOr(m.config);
    const name = typeof m.name === 'string' ? m.name : '';
    if (m.protocolMapper === GROUP_MAPPER && scopeName === 'groups' && (config['claim.name'] ?? 'groups') === 'groups' && config['full.path'] !== 'false') {
      notes.push("its group membership mapper is Realmgate's groups claim (the full paths of the user's groups)");
    } else if (m.protocolMapper === SESSION_NOTE_MAPPER && !isKeycloakDefault(scopeName, m, config) && !SESSION_NOTES.includes(String(config['user.session.note']))) {
      unkept.push(String(config['user.session.note']));
    } else if (typeof m.protocolMapper === 'string' && MAPPER_TYPES.includes(m.protocolMapper) && !isKeycloakDefault(scopeName, m, config)) {
      try {
        movable.push({ name, fields: fromProtocolMapperRepresentation(m) });
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        movable.push({ name, refused: err.message });
      }
    } else others++;
  }
  if (unkept.length > 0) notes.push(`${unkept.length} session note mapper(s) not moved: Realmgate's sessions keep no note ${[...new Set(unkept)].join(', ')} (they keep ${SESSION_NOTES.join(', ')})`);
  if (others > 0) notes.push(`${others} protocol mapper(s) not moved${scopeName !== undefined ? ': Realmgate issues its own claims' : ' (Realmgate runs the user attribute, user property, hard-coded claim, audience, group membership, realm role, client role and user session note mappers)'}`);
  return { movable, note: notes.length > 0 ? notes.join('; ') : undefined };
}

/**
 * Stores the movable mappers of a client or scope the import stored, each checked by the admin API's
 * rules: one that breaks a rule (a reserved claim, a name the owner has already) is reported and left
 * out, its owner stays imported.
 */
export async function storeFileMappers(store: Store, owner: MapperOwner, element: string, file: FileMappers, knownClient: (clientId: string) => boolean, report: RealmReportBuilder): Promise<void> {
  if (file.movable.length === 0) return;
  const taken = new Set((await store.protocolMappers.list(owner)).map((m) => m.name));
  const ok: CheckedMapper[] = [];
  for (const m of file.movable) {
    let reason = m.refused;
    if (!reason) {
      try {
        const checked = checkMapper(m.fields!, knownClient);
        if (taken.has(checked.name)) reason = 'the client or scope has a mapper of this name already';
        else {
          taken.add(checked.name);
          ok.push(checked);
        }
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        reason = err.message;
      }
    }
    if (reason) report.skipped(`${element} protocol mapper ${m.name}`, reason);
  }
  if (ok.length === 0) return;
  await storeMappers(store, owner, ok);
  report.imported(`${element} protocol mappers`, ok.map((m) => m.name).join(', '));
}
