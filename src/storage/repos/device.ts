import type { Kysely, Selectable } from 'kysely';
import type { Database, DeviceCodeTable } from '../schema.js';
import { ConflictError, type DeviceCode, type DeviceCodeStatus, type RefreshChain, type Subject } from '../types.js';
import { isUniqueViolation } from '../dialects/errors.js';
import { kyselyTokenStatements } from '../token-statements.js';
import { parseList, toSubject } from './mappers.js';
import { countPending, type PendingTable } from './pending.js';
import { startChain, type NewChain, type NewToken } from './tokens.js';
import { eventRow } from './events.js';
import { sortableId } from '../../crypto/random.js';
import { isEventStored } from '../../events/stored-types.js';

function toDevice(r: Selectable<DeviceCodeTable>): DeviceCode {
  return {
    hash: r.hash,
    realmId: r.realm_id,
    clientId: r.client_id,
    scopes: parseList(r.scopes),
    status: r.status as DeviceCodeStatus,
    interval: r.interval,
    lastPolledAt: r.last_polled_at === null ? null : Number(r.last_polled_at),
    userId: r.user_id,
    sessionId: r.session_id,
    organizationId: r.organization_id,
    authTime: r.auth_time === null ? null : Number(r.auth_time),
    chainId: r.chain_id,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    resources: parseList(r.resources),
  };
}

/** A device code is pending (can still be approved and polled) until its expiry. */
const PENDING: PendingTable = { table: 'device_codes', open: '>' };

/** What a poll decides: an error to answer, a new polling interval, or the tokens to issue. */
export type PollDecision<R> = { reject: R; interval?: number } | { chain: NewChain; token: NewToken };

export type PollOutcome<R> =
  | { status: 'not_found' }
  | { status: 'rejected'; reason: R }
  | { status: 'reused' }
  | { status: 'issued'; chain: RefreshChain; subject: Subject; device: DeviceCode };

/** RFC 8628 device codes; the device_code and the user_code are stored only as hashes. */
export class DeviceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(d: { hash: string; userCodeHash: string; realmId: string; clientId: string; scopes: string[]; resources?: string[]; interval: number; now: number; expiresAt: number; ip?: string | null }): Promise<void> {
    try {
      await this.db
        .insertInto('device_codes')
        .values({
          hash: d.hash,
          user_code_hash: d.userCodeHash,
          realm_id: d.realmId,
          client_id: d.clientId,
          scopes: JSON.stringify(d.scopes),
          status: 'pending',
          interval: d.interval,
          last_polled_at: null,
          user_id: null,
          session_id: null,
          organization_id: null,
          auth_time: null,
          chain_id: null,
          created_at: d.now,
          expires_at: d.expiresAt,
          resources: JSON.stringify(d.resources ?? []),
          ip: d.ip ?? null,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('user code collision');
      throw err;
    }
  }

  /** Device codes not yet expired that were asked for from one address, counted up to `upTo` (the cap). */
  countPendingFrom(ip: string, now: number, upTo: number): Promise<number> {
    return countPending(this.db, PENDING, now, { ip, upTo });
  }

  /** Device codes not yet expired, of every address. */
  countPending(now: number): Promise<number> {
    return countPending(this.db, PENDING, now);
  }

  async findByUserCode(userCodeHash: string): Promise<DeviceCode | undefined> {
    const r = await this.db.selectFrom('device_codes').selectAll().where('user_code_hash', '=', userCodeHash).executeTakeFirst();
    return r ? toDevice(r) : undefined;
  }

  async get(hash: string): Promise<DeviceCode | undefined> {
    const r = await this.db.selectFrom('device_codes').selectAll().where('hash', '=', hash).executeTakeFirst();
    return r ? toDevice(r) : undefined;
  }

  /** Records the user's approval; false when the code is no longer pending or has expired. */
  async approve(hash: string, a: { userId: string; sessionId: string; organizationId: string; authTime: number; now: number }): Promise<boolean> {
    const r = await this.db
      .updateTable('device_codes')
      .set({ status: 'approved', user_id: a.userId, session_id: a.sessionId, organization_id: a.organizationId, auth_time: a.authTime })
      .where('hash', '=', hash)
      .where('status', '=', 'pending')
      .where('expires_at', '>', a.now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async deny(hash: string): Promise<void> {
    await this.db.updateTable('device_codes').set({ status: 'denied' }).where('hash', '=', hash).where('status', '=', 'pending').execute();
  }

  /**
   * One poll of the token endpoint (RFC 8628 3.4, 3.5), in one transaction: records the poll time (and
   * a slower interval), and when `decide` accepts an approved code, consumes it and creates the refresh
   * chain and its first token. A consumed code presented again revokes that chain.
   */
  async poll<R>(hash: string, now: number, decide: (d: DeviceCode, subject: Subject | undefined) => PollDecision<R>, info?: { ip: string | null; storedEventTypes?: readonly string[] }): Promise<PollOutcome<R>> {
    return this.db.transaction().execute(async (trx): Promise<PollOutcome<R>> => {
      const row = await trx
        .selectFrom('device_codes as d')
        .leftJoin('users as u', 'u.id', 'd.user_id')
        .leftJoin('organizations as o', 'o.id', 'd.organization_id')
        .selectAll('d')
        .select(['u.username', 'u.email', 'u.first_name', 'u.last_name', 'u.email_verified', 'u.enabled as user_enabled', 'o.alias as org_alias', 'u.attributes as user_attributes'])
        .where('d.hash', '=', hash)
        .executeTakeFirst();
      if (!row) return { status: 'not_found' };
      const device = toDevice(row);
      const statements = kyselyTokenStatements(trx);
      if (device.status === 'consumed') {
        if (device.chainId) await statements.revokeChain({ id: device.chainId, now, reason: 'device code reused', event: null });
        return { status: 'reused' };
      }
      const subject = row.user_id ? toSubject({ ...row, user_id: row.user_id }) : undefined;
      const d = decide(device, subject);
      if ('reject' in d) {
        await trx
          .updateTable('device_codes')
          .set({ last_polled_at: now, interval: d.interval ?? device.interval })
          .where('hash', '=', hash)
          .execute();
        return { status: 'rejected', reason: d.reject };
      }
      const claimed = await trx
        .updateTable('device_codes')
        .set({ status: 'consumed', last_polled_at: now, chain_id: d.chain.id })
        .where('hash', '=', hash)
        .where('status', '=', 'approved')
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1 || !subject) return { status: 'reused' };
      const chain = await startChain(statements, {
        id: d.chain.id,
        realmId: device.realmId,
        clientId: device.clientId,
        userId: subject.userId,
        organizationId: device.organizationId!,
        scopes: device.scopes,
        sessionId: device.sessionId!,
        authTime: device.authTime ?? now,
        createdAt: now,
        maxExpiresAt: d.chain.maxExpiresAt,
        revokedAt: null,
        dpopJkt: d.chain.dpopJkt ?? null,
      }, d.token.hash);
      if (isEventStored(info?.storedEventTypes, 'DEVICE_TO_TOKEN', 'success')) await statements.insertEvent(
        eventRow({ id: sortableId(), time: now, realmId: chain.realmId, type: 'DEVICE_TO_TOKEN', outcome: 'success', clientId: chain.clientId, userId: chain.userId, username: row.username, ip: info?.ip ?? null }),
      );
      return { status: 'issued', chain, subject, device };
    });
  }

  async deleteExpired(before: number): Promise<number> {
    const r = await this.db.deleteFrom('device_codes').where('expires_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
