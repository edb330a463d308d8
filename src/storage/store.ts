import type { Db } from './database.js';
import { RealmRepository } from './repos/realms.js';
import { ClientRepository } from './repos/clients.js';
import { OrganizationRepository, UserRepository } from './repos/users.js';
import { KeyRepository } from './repos/keys.js';
import { HmacKeyRepository } from './repos/hmac-keys.js';
import { ConsentRepository, InteractionRepository, SessionRepository } from './repos/interactions.js';
import { CodeRepository, RefreshRepository, TokenStateRepository } from './repos/tokens.js';
import { DeviceRepository } from './repos/device.js';
import { PushedRequestRepository } from './repos/pushed-requests.js';
import { EventRepository } from './repos/events.js';
import { LoginFailureRepository } from './repos/login-failures.js';
import { MetaRepository } from './repos/meta.js';
import { RoleRepository } from './repos/roles.js';
import { RoleScopeRepository } from './repos/role-scopes.js';
import { ClientRegistrationRepository } from './repos/client-registration.js';
import { GroupRepository } from './repos/groups.js';
import { AdminEventRepository } from './repos/admin-events.js';
import { UserAdminRepository } from './repos/user-admin.js';
import { OtpRepository } from './repos/otp.js';
import { WebAuthnRepository } from './repos/webauthn.js';
import { RecoveryCodeRepository } from './repos/recovery-codes.js';
import { InvitationRepository } from './repos/invitations.js';
import { OrganizationAdminRepository } from './repos/organization-admin.js';
import { SessionAdminRepository } from './repos/session-admin.js';
import { LeaseRepository } from './repos/leases.js';
import { CollectorRepository } from './repos/collector.js';
import { ClientAssertionRepository, UsedIdRepository } from './repos/client-assertions.js';
import { ProtocolMapperRepository } from './repos/protocol-mappers.js';
import { IdentityProviderRepository } from './repos/identity-providers.js';
import { UserStorageRepository } from './repos/user-storage.js';
import { LocalizationRepository } from './repos/localization.js';
import type { SessionClient } from './repos/session-admin.js';

/**
 * Told, after the change, of the sessions an administrative change ended (user logout, session deletion,
 * disabled or deleted user, password change) and the clients used in them: a running server sends them
 * back-channel logout tokens (src/oidc/backchannel-logout.ts). Unset (the CLI), nobody is told.
 */
export type SessionEndListener = (realmId: string, ended: SessionClient[]) => void;

/** Every repository over one database. */
export class Store {
  readonly realms: RealmRepository;
  readonly clients: ClientRepository;
  readonly users: UserRepository;
  readonly organizations: OrganizationRepository;
  readonly keys: KeyRepository;
  readonly hmacKeys: HmacKeyRepository;
  readonly interactions: InteractionRepository;
  readonly sessions: SessionRepository;
  readonly consents: ConsentRepository;
  readonly codes: CodeRepository;
  readonly refresh: RefreshRepository;
  readonly devices: DeviceRepository;
  /** RFC 9126 pushed authorization requests, by the hash of their request_uri. */
  readonly pushedRequests: PushedRequestRepository;
  readonly tokenState: TokenStateRepository;
  readonly events: EventRepository;
  readonly loginFailures: LoginFailureRepository;
  readonly meta: MetaRepository;
  readonly roles: RoleRepository;
  /** Keycloak's role scope mappings of clients and client scopes. */
  readonly roleScopes: RoleScopeRepository;
  readonly clientRegistration: ClientRegistrationRepository;
  readonly groups: GroupRepository;
  readonly adminEvents: AdminEventRepository;
  /** Administration (src/admin/operations): search, lifecycle, members, sessions, revocation. */
  readonly userAdmin: UserAdminRepository;
  readonly organizationAdmin: OrganizationAdminRepository;
  readonly sessionAdmin: SessionAdminRepository;
  readonly leases: LeaseRepository;
  readonly collector: CollectorRepository;
  /** Used ids of client assertions (private_key_jwt replay protection). */
  readonly clientAssertions: ClientAssertionRepository;
  /** RFC 9449 11.1: the jti of DPoP proofs already used, by realm, htu and jti. */
  readonly dpopProofs: UsedIdRepository;
  /** Keycloak's protocol mappers (custom claims) of clients and client scopes. */
  readonly protocolMappers: ProtocolMapperRepository;
  readonly otp: OtpRepository;
  readonly webauthn: WebAuthnRepository;
  readonly recoveryCodes: RecoveryCodeRepository;
  /** Identity brokering: the realm's OpenID Connect providers and users' links to them. */
  readonly identityProviders: IdentityProviderRepository;
  readonly userStorage: UserStorageRepository;
  /** Keycloak 26's organization invitations. */
  readonly invitations: InvitationRepository;
  /** Keycloak's realm localization texts (locale -> key -> text). */
  readonly localization: LocalizationRepository;
  /** Set by a running server (src/app.ts); a Store of a transaction has none. */
  sessionEnds: SessionEndListener | undefined;

  constructor(readonly db: Db) {
    const k = db.kysely;
    this.realms = new RealmRepository(k);
    this.clients = new ClientRepository(k);
    this.users = new UserRepository(k);
    this.organizations = new OrganizationRepository(k);
    this.keys = new KeyRepository(k);
    this.hmacKeys = new HmacKeyRepository(k);
    this.interactions = new InteractionRepository(k);
    this.sessions = new SessionRepository(k);
    this.consents = new ConsentRepository(k);
    this.codes = new CodeRepository(db);
    this.refresh = new RefreshRepository(db);
    this.devices = new DeviceRepository(k);
    this.pushedRequests = new PushedRequestRepository(k);
    this.tokenState = new TokenStateRepository(k);
    this.events = new EventRepository(k);
    this.loginFailures = new LoginFailureRepository(k);
    this.meta = new MetaRepository(k);
    this.roles = new RoleRepository(k);
    this.roleScopes = new RoleScopeRepository(k);
    this.clientRegistration = new ClientRegistrationRepository(k);
    this.groups = new GroupRepository(k);
    this.adminEvents = new AdminEventRepository(k);
    this.userAdmin = new UserAdminRepository(k, db.dialect);
    this.organizationAdmin = new OrganizationAdminRepository(k);
    this.sessionAdmin = new SessionAdminRepository(k);
    this.leases = new LeaseRepository(k);
    this.collector = new CollectorRepository(k);
    this.clientAssertions = new ClientAssertionRepository(k);
    this.dpopProofs = new UsedIdRepository(k, 'dpop_proof_jtis');
    this.protocolMappers = new ProtocolMapperRepository(k);
    this.otp = new OtpRepository(k);
    this.webauthn = new WebAuthnRepository(k);
    this.recoveryCodes = new RecoveryCodeRepository(k);
    this.identityProviders = new IdentityProviderRepository(k);
    this.userStorage = new UserStorageRepository(k);
    this.invitations = new InvitationRepository(k);
    this.localization = new LocalizationRepository(k);
  }

  /**
   * Runs `fn` with a Store whose every repository works inside one database transaction: all of it is
   * committed, or nothing (a realm import). The hot token runner is not meant for use inside it.
   */
  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.db.kysely.isTransaction) return fn(this);
    return this.db.kysely.transaction().execute((trx) => fn(new Store({ ...this.db, kysely: trx })));
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
