import { ValidationError } from '../validation.js';

/**
 * Field-by-field readers for untrusted Keycloak JSON bodies (ARCHITECTURE 4.4: unknown until checked).
 * Absent and null fields read as undefined; a field of the wrong type is a ValidationError naming it.
 */
export function asObject(body: unknown, what: string): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError(`the body must be a JSON ${what} representation`);
  return body as Record<string, unknown>;
}

export function optString(o: Record<string, unknown>, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ValidationError(`${key} must be a string`);
  return v;
}

export function optBoolean(o: Record<string, unknown>, key: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ValidationError(`${key} must be true or false`);
  return v;
}

export function optArray(o: Record<string, unknown>, key: string): unknown[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new ValidationError(`${key} must be a list`);
  return v;
}

export function optStringArray(o: Record<string, unknown>, key: string): string[] | undefined {
  const list = optArray(o, key);
  if (list === undefined) return undefined;
  if (!list.every((x): x is string => typeof x === 'string')) throw new ValidationError(`${key} must be a list of strings`);
  return list;
}
