import type { MapperOwnerType, ProtocolMapper } from '../../../storage/types.js';
import { ValidationError } from '../../validation.js';

/** Keycloak's ProtocolMapperRepresentation (OpenID Connect only). */
export interface ProtocolMapperRepresentation {
  id: string;
  name: string;
  protocol: 'openid-connect';
  protocolMapper: string;
  consentRequired: false;
  config: Record<string, string>;
}

/** What a create or update body says; each field checked for its JSON type only (the rules: checkMapper). */
export interface MapperFields {
  name?: string;
  protocol?: string;
  protocolMapper?: string;
  config?: Record<string, string>;
}

export function toProtocolMapperRepresentation(m: ProtocolMapper): ProtocolMapperRepresentation {
  return { id: m.id, name: m.name, protocol: 'openid-connect', protocolMapper: m.type, consentRequired: false, config: { ...m.config } };
}

function optText(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ValidationError(`${key} must be a string`);
  return v;
}

/**
 * Keycloak's config is a map of strings; as Jackson does when it reads one, a boolean or a number becomes
 * its text ("true"), anything else is refused.
 */
function configOf(v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new ValidationError('config must be an object of strings');
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'string') out[k] = x;
    else if (typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x))) out[k] = String(x);
    else if (x !== null) throw new ValidationError(`config.${k} must be a string`);
  }
  return out;
}

export function fromProtocolMapperRepresentation(body: unknown): MapperFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError('a protocol mapper must be a JSON object');
  const b = body as Record<string, unknown>;
  const out: MapperFields = {};
  const name = optText(b, 'name');
  const protocol = optText(b, 'protocol');
  const type = optText(b, 'protocolMapper');
  const config = configOf(b.config);
  if (name !== undefined) out.name = name;
  if (protocol !== undefined) out.protocol = protocol;
  if (type !== undefined) out.protocolMapper = type;
  if (config !== undefined) out.config = config;
  return out;
}

/** A list of mappers (add-models, a client's or scope's protocolMappers). */
export function fromProtocolMapperList(body: unknown, what = 'the request body'): MapperFields[] {
  if (!Array.isArray(body)) throw new ValidationError(`${what} must be a list of protocol mappers`);
  return body.map(fromProtocolMapperRepresentation);
}

/** Keycloak's protocolMappers of each client or scope, from a realm's mappers (owners without any: no field). */
export function protocolMappersByOwner(mappers: readonly ProtocolMapper[], kind: MapperOwnerType): (owner: string) => { protocolMappers?: ProtocolMapperRepresentation[] } {
  const byOwner = new Map<string, ProtocolMapperRepresentation[]>();
  for (const m of mappers) {
    if (m.ownerType !== kind) continue;
    const list = byOwner.get(m.owner) ?? [];
    list.push(toProtocolMapperRepresentation(m));
    byOwner.set(m.owner, list);
  }
  return (owner) => (byOwner.has(owner) ? { protocolMappers: byOwner.get(owner)! } : {});
}
