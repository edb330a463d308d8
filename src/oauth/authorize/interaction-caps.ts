import type { CapScope } from '../pending-caps.js';

/** Thrown when a new authorization request would pass a cap on unfinished ones (PendingCaps); the page says which. */
export class InteractionLimitError extends Error {
  constructor(readonly scope: CapScope) {
    super(scope === 'address' ? 'too many unfinished sign-ins from this address' : 'too many unfinished sign-ins on this server');
  }
}
