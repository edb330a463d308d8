/**
 * Route schemas of the admin API: the single source of its request validation and of its OpenAPI
 * document. Keycloak ignores representation fields it does not know, and so do we (additionalProperties).
 */
export const anyObject = { type: 'object', additionalProperties: true } as const;

export const realmParams = {
  type: 'object',
  properties: { realm: { type: 'string', maxLength: 64 } },
  required: ['realm'],
} as const;

export function params(extra: Record<string, { type: 'string'; maxLength?: number }>): object {
  return {
    type: 'object',
    properties: { realm: { type: 'string', maxLength: 64 }, ...extra },
    required: ['realm', ...Object.keys(extra)],
  };
}

export const created201 = { 201: { description: 'Created; Location names the new resource (its last segment is the id)', type: 'null' } } as const;
export const noContent204 = { 204: { description: 'Done', type: 'null' } } as const;

export const security = [{ bearer: [] }];
