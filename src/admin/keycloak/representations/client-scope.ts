import type { Scope } from '../../../storage/types.js';
import { ValidationError } from '../../validation.js';

/** Keycloak's ClientScopeRepresentation; the scope's name is its id, the consent text an attribute. */
export interface ClientScopeRepresentation {
  id: string;
  name: string;
  protocol: 'openid-connect';
  attributes: Record<string, string>;
}

export function toClientScopeRepresentation(s: Scope): ClientScopeRepresentation {
  return {
    id: s.name,
    name: s.name,
    protocol: 'openid-connect',
    attributes: { 'consent.screen.text': s.consentText, 'display.on.consent.screen': 'true', 'include.in.token.scope': 'true' },
  };
}

/** Name and consent text from a create or update body (Keycloak puts the text in an attribute; description is the fallback). */
export function fromClientScopeRepresentation(body: Record<string, unknown>): { name?: string; consentText?: string } {
  const out: { name?: string; consentText?: string } = {};
  if (body.name !== undefined) {
    if (typeof body.name !== 'string') throw new ValidationError('name must be a string');
    out.name = body.name;
  }
  if (body.protocol !== undefined && body.protocol !== 'openid-connect') throw new ValidationError('only openid-connect client scopes are supported');
  const attrs = body.attributes as Record<string, unknown> | undefined;
  const text = attrs && typeof attrs === 'object' ? attrs['consent.screen.text'] : undefined;
  if (typeof text === 'string' && text !== '') out.consentText = text;
  else if (typeof body.description === 'string' && body.description !== '') out.consentText = body.description;
  return out;
}
