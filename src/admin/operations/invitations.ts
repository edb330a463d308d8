import type { Services } from '../../services.js';
import type { Realm, User } from '../../storage/types.js';
import type { Store } from '../../storage/store.js';
import type { Invitation, InvitationQuery } from '../../storage/repos/invitations.js';
import type { OrganizationDetails } from '../../storage/repos/organization-admin.js';
import { realmBase } from '../../services.js';
import { nowSeconds } from '../../clock.js';
import { randomId, randomToken, tokenHash } from '../../crypto/random.js';
import { canSendMail, MailError, sendMail } from '../../mail/mailer.js';
import { organizationInviteMail } from '../../views/mail.js';
import { renderMail } from '../../mail/locale.js';
import { checkEmail, checkPage, checkText, ConflictError, LIMITS, NotFound, ValidationError } from '../validation.js';
import { requireOrganization } from './organizations.js';
import { cliActor, recordAdminEvent, type Actor } from './common.js';

type Log = { warn(obj: object, msg: string): void };

/** The link of an invitation: from AUTH_URL, never from a request's Host header (as every mailed link). */
export function invitationLink(services: Pick<Services, 'config'>, realmId: string, secret: string): string {
  return `${realmBase(services.config, realmId)}/login-actions/org-invitation?key=${encodeURIComponent(secret)}`;
}

/** Keycloak's OrganizationInvitationRepresentation (no inviteLink: its secret is known only to the mail). */
export function toInvitationRepresentation(inv: Invitation, now: number): Record<string, unknown> {
  return {
    id: inv.id,
    email: inv.email,
    organizationId: inv.organizationId,
    ...(inv.firstName !== null ? { firstName: inv.firstName } : {}),
    ...(inv.lastName !== null ? { lastName: inv.lastName } : {}),
    sentDate: inv.createdAt,
    expiresAt: inv.expiresAt,
    status: inv.expiresAt > now ? 'PENDING' : 'EXPIRED',
  };
}

const optionalName = (label: string, v: string | undefined): string | null => {
  if (v === undefined || v.trim() === '') return null;
  checkText(label, v.trim(), LIMITS.personName);
  return v.trim();
};

/**
 * Creates the invitation and mails its link (the realm's actionTokenGeneratedByAdminLifespan, as
 * Keycloak): to an existing `user`, a link to accept; else a link to register with that email. A mail the
 * server did not take undoes the invitation and rejects with a MailError.
 */
async function sendInvitation(
  services: Services,
  realm: Realm,
  org: OrganizationDetails,
  o: { email: string; firstName: string | null; lastName: string | null; user?: User; log: Log },
  actor: Actor,
): Promise<Invitation> {
  if (!canSendMail(realm)) throw new ValidationError('the realm has no SMTP server (smtpServer): set one before sending invitations');
  const now = nowSeconds(services.clock);
  const lifespan = realm.actionTokenAdminLifespan;
  const inv: Invitation = { id: randomId(), realmId: realm.id, organizationId: org.id, email: o.email, firstName: o.firstName, lastName: o.lastName, userId: o.user?.id ?? null, createdAt: now, expiresAt: now + lifespan };
  const secret = randomToken(32);
  await services.store.invitations.create(inv, tokenHash(secret));
  const link = invitationLink(services, realm.id, secret);
  // In the invited user's language; someone invited to register has none yet: the realm's default.
  const content = await renderMail(services, realm, o.user, () => organizationInviteMail({ realmName: realm.displayName ?? realm.id, organizationName: org.name, link, lifespan, firstName: o.user?.firstName ?? o.firstName, register: !o.user }));
  try {
    await sendMail(services.store, realm, { to: o.email, ...content });
  } catch (err) {
    await services.store.invitations.delete(inv.id);
    const reason = err instanceof MailError ? err.message : 'unexpected error';
    o.log.warn({ realm: realm.id, organization: org.id, reason }, 'organization invitation not sent');
    throw err instanceof MailError ? err : new MailError(reason);
  }
  await recordAdminEvent(services.store, actor, {
    realmId: realm.id,
    operation: 'ACTION',
    resourceType: 'ORGANIZATION_MEMBERSHIP',
    resourcePath: `organizations/${org.id}/members/${o.user ? 'invite-existing-user' : 'invite-user'}`,
    representation: { id: inv.id, email: inv.email, ...(o.user ? { userId: o.user.id } : {}) },
  });
  return inv;
}

/** No second pending invitation for an address (an expired one is replaced), and none for a member. */
async function checkInvitable(store: Store, org: OrganizationDetails, email: string, user: User | undefined, now: number): Promise<void> {
  const existing = await store.invitations.byEmail(org.id, email);
  if (existing && existing.expiresAt > now) throw new ConflictError('User already has a pending invitation');
  if (user && (await store.organizationAdmin.isMember(org.id, user.id))) throw new ConflictError('User already a member of the organization');
  if (existing) await store.invitations.delete(existing.id);
}

/**
 * Keycloak's members/invite-user: invites `email` (trimmed, lower-cased) into the organization. A user of
 * the realm with that email is invited as an existing user; otherwise the link registers a new one.
 */
export async function inviteUser(
  services: Services,
  input: { realmId: string; organization: string; email?: string; firstName?: string; lastName?: string; log: Log },
  actor: Actor = cliActor(),
): Promise<Invitation> {
  const org = await requireOrganization(services.store, input.realmId, input.organization);
  if (input.email === undefined || input.email.trim() === '') throw new ValidationError('Email is required to invite a member');
  const email = input.email.trim().toLowerCase();
  try {
    checkEmail(email);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError('Invalid email format');
    throw err;
  }
  const firstName = optionalName('the first name', input.firstName);
  const lastName = optionalName('the last name', input.lastName);
  const realm = (await services.store.realms.get(input.realmId))!;
  const users = await services.store.users.findByEmail(realm.id, email, 1);
  const user = users[0];
  await checkInvitable(services.store, org, email, user, nowSeconds(services.clock));
  return sendInvitation(services, realm, org, { email, firstName: user ? user.firstName : firstName, lastName: user ? user.lastName : lastName, ...(user ? { user } : {}), log: input.log }, actor);
}

/** Keycloak's members/invite-existing-user: invites the user `userId` (or username) to the email they have. */
export async function inviteExistingUser(services: Services, input: { realmId: string; organization: string; user?: string; log: Log }, actor: Actor = cliActor()): Promise<Invitation> {
  const org = await requireOrganization(services.store, input.realmId, input.organization);
  if (input.user === undefined || input.user.trim() === '') throw new ValidationError('To invite a member you need to provide the user id');
  const byId = await services.store.users.get(input.user);
  const user = byId?.realmId === input.realmId ? byId : await services.store.users.findByUsername(input.realmId, input.user.toLowerCase());
  if (!user) throw new ValidationError('User does not exist');
  if (!user.email) throw new ValidationError('User email missing');
  if (!user.enabled) throw new ValidationError('User is disabled');
  await checkInvitable(services.store, org, user.email.toLowerCase(), user, nowSeconds(services.clock));
  const realm = (await services.store.realms.get(input.realmId))!;
  return sendInvitation(services, realm, org, { email: user.email.toLowerCase(), firstName: user.firstName, lastName: user.lastName, user, log: input.log }, actor);
}

export async function listInvitations(services: Services, input: { realmId: string; organization: string } & Omit<InvitationQuery, 'now'>): Promise<Invitation[]> {
  const { realmId, organization, ...q } = input;
  checkPage(q);
  const org = await requireOrganization(services.store, realmId, organization);
  return services.store.invitations.list(org.id, { ...q, now: nowSeconds(services.clock) });
}

export async function requireInvitation(store: Store, input: { realmId: string; organization: string; invitation: string }): Promise<{ org: OrganizationDetails; inv: Invitation }> {
  const org = await requireOrganization(store, input.realmId, input.organization);
  const inv = await store.invitations.get(input.invitation);
  if (!inv || inv.organizationId !== org.id) throw new NotFound('Invitation not found');
  return { org, inv };
}

/** Deletes the invitation: its link no longer works. */
export async function deleteInvitation(services: Services, input: { realmId: string; organization: string; invitation: string }, actor: Actor = cliActor()): Promise<Invitation> {
  const { org, inv } = await requireInvitation(services.store, input);
  if (!(await services.store.invitations.delete(inv.id))) throw new NotFound('Invitation not found');
  await recordAdminEvent(services.store, actor, { realmId: input.realmId, operation: 'DELETE', resourceType: 'ORGANIZATION_MEMBERSHIP', resourcePath: `organizations/${org.id}/invitations/${inv.id}` });
  return inv;
}

/** Keycloak's resend: the old invitation (and its link) goes, a new one is made and mailed, as invite-user would. */
export async function resendInvitation(services: Services, input: { realmId: string; organization: string; invitation: string; log: Log }, actor: Actor = cliActor()): Promise<Invitation> {
  const { org, inv } = await requireInvitation(services.store, input);
  await services.store.invitations.delete(inv.id);
  return inviteUser(services, { realmId: input.realmId, organization: org.id, email: inv.email, ...(inv.firstName !== null ? { firstName: inv.firstName } : {}), ...(inv.lastName !== null ? { lastName: inv.lastName } : {}), log: input.log }, actor);
}

/** The invitation a link's secret opens in the realm, if any (expired or not: the caller says which). */
export function invitationOfLink(store: Store, realmId: string, secret: unknown): Promise<Invitation | undefined> {
  if (typeof secret !== 'string' || !/^[A-Za-z0-9_-]{20,100}$/.test(secret)) return Promise.resolve(undefined);
  return store.invitations.bySecretHash(realmId, tokenHash(secret));
}

/**
 * The invitation is used (once: the conditional delete decides between two tabs) and `user` becomes a
 * member; recorded as Keycloak's INVITE_ORG event. False when the link was used, deleted or expired meanwhile.
 */
export async function acceptInvitation(services: Services, inv: Invitation, secret: string, user: User, ip: string): Promise<boolean> {
  if (!(await services.store.invitations.consume(inv.id, tokenHash(secret), nowSeconds(services.clock)))) return false;
  await services.store.users.addMembership(user.id, inv.organizationId);
  await services.audit.record({ realmId: inv.realmId, type: 'INVITE_ORG', outcome: 'success', clientId: 'account', userId: user.id, username: user.username, ip, reason: `joined organization ${inv.organizationId} through invitation ${inv.id}` });
  return true;
}
