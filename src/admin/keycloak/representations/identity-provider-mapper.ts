import type { IdentityProviderMapper } from '../../../storage/types.js';
import type { MapperFields } from '../../operations/identity-provider-mappers.js';
import { MAPPER_TYPES } from '../../operations/identity-provider-mappers.js';
import { asObject, optString } from '../read-json.js';
import { ValidationError } from '../../validation.js';

/** Keycloak's IdentityProviderMapperRepresentation, read from untrusted JSON (the admin API, an import). */
export function readProviderMapper(body: unknown): MapperFields {
  const o = asObject(body, 'identity provider mapper');
  const out: MapperFields = {};
  for (const key of ['name', 'identityProviderAlias', 'identityProviderMapper'] as const) {
    const v = optString(o, key);
    if (v !== undefined) out[key] = v;
  }
  if (o.config !== undefined && o.config !== null) {
    const c = asObject(o.config, 'config');
    const config: Record<string, string> = {};
    for (const [k, v] of Object.entries(c)) {
      if (v === null || v === undefined) continue;
      if (typeof v !== 'string') throw new ValidationError(`config.${k} must be a string (Keycloak's config values are strings)`);
      // defineProperty: a key such as "__proto__" stays a key.
      Object.defineProperty(config, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    out.config = config;
  }
  return out;
}

export function toProviderMapperRepresentation(m: IdentityProviderMapper): Record<string, unknown> {
  return { id: m.id, name: m.name, identityProviderAlias: m.identityProvider, identityProviderMapper: m.type, config: { ...m.config } };
}

/** Keycloak's getMapperTypes: IdentityProviderMapperTypeRepresentation by type id. */
export function providerMapperTypes(): Record<string, unknown> {
  return Object.fromEntries(
    MAPPER_TYPES.map((t) => [
      t.id,
      { id: t.id, name: t.name, category: t.category, helpText: t.helpText, properties: t.properties.map((p) => ({ ...p, defaultValue: '', options: [], secret: false, required: false, readOnly: false })) },
    ]),
  );
}
