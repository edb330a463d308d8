import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import type { AdminCaller, AdminRole } from '../../admin/authorization.js';
import { mayMapRole } from '../../admin/authorization.js';
import type { Actor } from '../../admin/operations/common.js';
import type { MappingGuard } from '../../admin/operations/groups.js';
import { ConflictError, NotFound, ValidationError } from '../../admin/validation.js';
import type { ConsoleFrame } from '../../views/console/layout.js';

// What the console's route files share: the request shape, the form fields, the refusals, and the steps
// every page takes (signed in, the realm, the role it needs), which routes.ts defines once.

export type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown>; Body: Record<string, unknown> | undefined }>;

/** The signed-in admin of a request: who, as whom changes are recorded, and the page frame. */
export interface Signed {
  caller: AdminCaller;
  actor: Actor;
  frame: ConsoleFrame;
}

/** A page or change the admin's roles do not allow: the 403 page. */
export class Forbidden extends Error {}

/** A change the operator can correct (a refused value, a name already taken): the form again, with why (400). */
export function isRefusal(err: unknown): err is Error {
  return err instanceof ConflictError || (err instanceof ValidationError && !(err instanceof NotFound));
}

export function field(req: Req, name: string): string {
  const v = req.body?.[name];
  return typeof v === 'string' && v.length <= 2048 ? v.trim() : '';
}

/** A longer text (a role's description): the operation checks its length and characters, and says why it refuses one. */
export function text(req: Req, name: string): string {
  const v = req.body?.[name];
  return typeof v === 'string' ? v.trim() : '';
}

/**
 * The admin API's rule for handing out roles, for every console change of who holds which role (a user's
 * role mappings, and through a group: joining, leaving, mapping, moving, deleting): an admin role only by
 * an admin holding it (mayMapRole), checked by the operation before it writes anything.
 */
export function mappingGuard(caller: AdminCaller): Required<MappingGuard> {
  return {
    authorize: (roles) => {
      const denied = roles.find((r) => !mayMapRole(caller, r));
      if (denied) throw new Forbidden(`Only an administrator holding ${denied.name} may grant or remove it.`);
    },
  };
}

/** The steps routes.ts defines once, for the route files it registers. */
export interface ConsoleKit {
  services: Services;
  /** The signed-in admin (and, for a POST, a valid CSRF token), or undefined once the reply is sent. */
  signedIn(req: Req, reply: FastifyReply): Promise<Signed | undefined>;
  /** The realm of the URL, once the admin may see it (403 whether or not it exists). */
  realmOf(caller: AdminCaller, realmId: string): Promise<string>;
  /** Throws Forbidden unless the admin holds the role in the realm. */
  need(caller: AdminCaller, realmId: string, role: AdminRole): void;
  /** Runs a change; a refused value re-renders the page with the reason (400); else a 303 to `next`. */
  attempt(reply: FastifyReply, change: () => Promise<unknown>, onError: (message: string) => Promise<FastifyReply>, next: string): Promise<FastifyReply>;
  /** A user's page, with a refusal's status and reason. */
  showUser(s: Signed, reply: FastifyReply, realmId: string, userRef: string, status?: number, error?: string): Promise<FastifyReply>;
}
