import type { Config } from './config/config.js';
import type { Clock } from './clock.js';
import { ClientKeyCache, REMOTE_JWKS_DEFAULTS } from './oauth/client-keys.js';
import type { Store } from './storage/store.js';
import type { Client, Realm, Scope } from './storage/types.js';
import type { UserRoles } from './storage/repos/roles.js';
import type { RealmRoleScopes } from './storage/repos/role-scopes.js';
import { TtlCache } from './cache.js';
import { KeyStore } from './crypto/keystore.js';
import { Audit } from './audit.js';
import { FailureLimiter } from './failure-limiter.js';
import { FormKey } from './crypto/form-key.js';
import { FailureSampler } from './oauth/failure-sampling.js';
import { PendingCaps } from './oauth/pending-caps.js';
import { NO_MAPPERS, RealmMappers } from './oauth/protocol-mappers.js';
import { BackchannelLogout } from './oidc/backchannel-logout.js';

const REALM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const CLIENT_ID = /^[\x20-\x7E]{1,255}$/;

/** RFC 6749 A.1: a client id is 1 to 255 VSCHAR; anything else names no client. */
export function isClientId(v: string): boolean {
  return CLIENT_ID.test(v);
}

/** The texts of a realm that has none: one shared, empty value. */
const NO_TEXTS: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map();

/** Cached reads of the configuration that every request needs. */
export class ConfigCache {
  private readonly realms: TtlCache<Realm>;
  private readonly clients: TtlCache<Client>;
  private readonly scopes: TtlCache<Map<string, Scope>>;
  private readonly roleMappings: TtlCache<{ users: boolean; groups: boolean; composites: boolean }>;
  private readonly mappers: TtlCache<RealmMappers>;
  private readonly roleScopeMaps: TtlCache<RealmRoleScopes>;
  private readonly texts: TtlCache<ReadonlyMap<string, ReadonlyMap<string, string>>>;

  constructor(
    private readonly store: Store,
    ttlMs: number,
    nowMs: () => number = Date.now,
  ) {
    this.roleMappings = new TtlCache(ttlMs, 10_000, nowMs);
    this.realms = new TtlCache(ttlMs, 10_000, nowMs);
    this.clients = new TtlCache(ttlMs, 10_000, nowMs);
    this.scopes = new TtlCache(ttlMs, 10_000, nowMs);
    this.mappers = new TtlCache(ttlMs, 10_000, nowMs);
    this.roleScopeMaps = new TtlCache(ttlMs, 10_000, nowMs);
    this.texts = new TtlCache(ttlMs, 10_000, nowMs);
  }

  realm(id: string): Promise<Realm | undefined> {
    // Not a realm name (NUL, over-long, ...): no query at all.
    if (!REALM_NAME.test(id)) return Promise.resolve(undefined);
    // A disabled realm answers no protocol request, as if it did not exist.
    return this.realms.get(id, () => this.store.realms.get(id)).then((r) => (r?.enabled === false ? undefined : r));
  }

  /**
   * The user's roles for an access token. Most realms map no roles at all: for them a cached flag saves
   * the query (and another the walk through groups and composites where no group is mapped a role and no
   * role contains another); where roles exist they are read fresh, so a granted or removed role shows in
   * the next token.
   */
  async userRoles(realmId: string, userId: string): Promise<UserRoles | undefined> {
    const mapped = await this.roleMappings.get(realmId, () => this.store.roles.realmMappings(realmId));
    if (!mapped || (!mapped.users && !mapped.groups)) return undefined;
    const roles = await this.store.roles.userRoles(userId, { direct: !mapped.groups && !mapped.composites });
    return roles.realm.length === 0 && Object.keys(roles.clients).length === 0 ? undefined : roles;
  }

  client(realmId: string, clientId: string): Promise<Client | undefined> {
    // RFC 6749 A.1: client ids are VSCHAR; anything else names no client.
    if (!isClientId(clientId)) return Promise.resolve(undefined);
    return this.clients.get(`${realmId}\0${clientId}`, () => this.store.clients.get(realmId, clientId));
  }

  realmScopes(realmId: string): Promise<Map<string, Scope> | undefined> {
    return this.scopes.get(realmId, async () => new Map((await this.store.realms.scopes(realmId)).map((s) => [s.name, s])));
  }

  /**
   * The realm's protocol mappers, compiled: one query per cache window. A realm without any (most, and
   * the benchmark's) shares one empty value, so its tokens pay a cache hit and nothing else.
   */
  protocolMappers(realmId: string): Promise<RealmMappers> {
    // The loader never answers undefined, so neither does the cache.
    return this.mappers.get(realmId, async () => {
      const list = await this.store.protocolMappers.listRealm(realmId);
      return list.length === 0 ? NO_MAPPERS : new RealmMappers(list);
    }) as Promise<RealmMappers>;
  }

  /**
   * The realm's role scope mappings by owner (src/oauth/role-scope.ts): one query per cache window, read
   * only for the tokens of clients without fullScopeAllowed.
   */
  roleScopes(realmId: string): Promise<RealmRoleScopes> {
    // The loader never answers undefined, so neither does the cache.
    return this.roleScopeMaps.get(realmId, () => this.store.roleScopes.realm(realmId)) as Promise<RealmRoleScopes>;
  }

  /**
   * The realm's own localization texts (Keycloak's realm localization), locale -> key -> text: one query
   * per cache window. A realm without any (most) shares one empty value.
   */
  localizationTexts(realmId: string): Promise<ReadonlyMap<string, ReadonlyMap<string, string>>> {
    // The loader never answers undefined, so neither does the cache.
    return this.texts.get(realmId, async () => {
      const all = await this.store.localization.all(realmId);
      return all.size === 0 ? NO_TEXTS : all;
    }) as Promise<ReadonlyMap<string, ReadonlyMap<string, string>>>;
  }

  clear(): void {
    this.texts.clear();
    this.roleScopeMaps.clear();
    this.mappers.clear();
    this.realms.clear();
    this.clients.clear();
    this.scopes.clear();
    this.roleMappings.clear();
  }
}

/** Everything the protocol core and the HTTP layer share: one per running server. */
export interface Services {
  config: Config;
  store: Store;
  clock: Clock;
  cache: ConfigCache;
  keys: KeyStore;
  audit: Audit;
  /** The server secret behind the CSRF tokens of the account, logout and device forms. */
  formKey: FormKey;
  /** Failed client authentications, per client and address and per client (RFC 6819 5.2.3.7). */
  clientFailures: { perAddress: FailureLimiter; perClient: FailureLimiter; sampler: FailureSampler };
  /** The public keys of private_key_jwt clients (inline, certificate, or fetched from their JWKS URL), cached. */
  clientKeys: ClientKeyCache;
  /**
   * Mailed links asked for at "Forgot password?": per address (req.ip, which REALMGATE_TRUSTED_PROXIES
   * makes the client's) and per user, counted as requests, so a flood neither fills a mailbox nor the
   * SMTP server's quota.
   */
  resetMails: { perAddress: FailureLimiter; perUser: FailureLimiter };
  /** Caps on unfinished authorization requests, per address and overall. */
  interactionCaps: PendingCaps;
  /** Caps on pending device codes (RFC 8628), per address (public clients) and overall; the same settings, counted apart. */
  deviceCaps: PendingCaps;
  /** Caps on unexpired pushed authorization requests (RFC 9126): per address (public clients) and overall; per confidential client apart (src/oauth/par.ts). */
  parCaps: PendingCaps;
  /** OpenID Connect Back-Channel Logout: logout tokens to the clients of ended sessions, in the background. */
  backchannel: BackchannelLogout;
}

export function createServices(config: Config, store: Store, clock: Clock): Services {
  const cache = new ConfigCache(store, config.cacheTtlMs, () => clock.nowMs());
  const keys = new KeyStore(store, config.cacheTtlMs, clock);
  // audit.counter counts every event, stored or not: the source of the events metric.
  const audit = new Audit(store, clock, { storedEventTypes: async (realmId) => (await cache.realm(realmId))?.storedEventTypes });
  return {
    config,
    store,
    clock,
    cache,
    keys,
    audit,
    clientFailures: {
      perAddress: new FailureLimiter(10, 60_000, () => clock.nowMs()),
      perClient: new FailureLimiter(100, 60_000, () => clock.nowMs()),
      sampler: new FailureSampler(),
    },
    clientKeys: new ClientKeyCache(REMOTE_JWKS_DEFAULTS, () => clock.nowMs()),
    resetMails: {
      perAddress: new FailureLimiter(10, 15 * 60_000, () => clock.nowMs()),
      perUser: new FailureLimiter(3, 15 * 60_000, () => clock.nowMs()),
    },
    formKey: new FormKey(store),
    interactionCaps: new PendingCaps(store.interactions, config.maxInteractionsPerAddress, config.maxInteractions, () => clock.nowMs()),
    deviceCaps: new PendingCaps(store.devices, config.maxInteractionsPerAddress, config.maxInteractions, () => clock.nowMs()),
    parCaps: new PendingCaps(store.pushedRequests, config.maxInteractionsPerAddress, config.maxInteractions, () => clock.nowMs()),
    backchannel: new BackchannelLogout({ store, keys, config, clock, audit }),
  };
}

/** `{AUTH_URL}/auth/realms/<realm>`: the issuer and the prefix of every realm endpoint. */
export function realmBase(config: Config, realmId: string): string {
  return `${config.authUrl}/auth/realms/${encodeURIComponent(realmId)}`;
}
