// The ledger on Redis: admission and settlement are each one step of a Lua script (lua/admit.lua,
// lua/settle.lua), so every change of money and limits is atomic across all gateways. The
// admissions and settlements of one turn of the event loop go in one script call (lua/ledger.lua;
// redis-ledger-batch.ts). This class admits on a lease while the user is far from every limit
// (redis-budget-lease.ts) and otherwise sends the step to its batch. What a step carries and what
// its reply says are in redis-ledger-admission.ts and redis-ledger-settlement.ts; balances are
// read in redis-ledger-balance.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  subjectOf,
  type Admission,
  type AdmissionResult,
  type Balance,
  type Ledger,
  type OtherLevel,
  type Settlement,
  type SettleResult,
} from '../ledger.ts';
import { randomId } from '../../ids.ts';
import { BudgetLease, BUDGET_LEASES } from './redis-budget-lease.ts';
import { StoreUnavailableError } from '../store-errors.ts';
import { defineScript, scriptSource, type ScriptParts } from './scripts.ts';
import { readAdmission, type AdmitReply } from './redis-ledger-admission.ts';
import { readBalance } from './redis-ledger-balance.ts';
import { MAX_BATCH, runBatches, type Pending, type SendBatch } from './redis-ledger-batch.ts';
import type { RedisClient } from './redis-client.ts';
import { ALERTS_KEPT, ledgerPrelude, limitsOf, stepTime } from './redis-ledger-common.ts';
import { leaseHold, settleStep, type SettleStep } from './redis-ledger-settlement.ts';
import { markKeptMs, mayRetry, RETRY_DELAY_MS, type ReplicaConfirmation } from './redis-durability.ts';
import { keys, type MoneyHome } from './keys.ts';

/** A user's leases on one router (or on none, scope '-'): the one open, and whether one is being asked for. */
interface LeaseSlot {
  lease: BudgetLease | undefined;
  /** The admission asking for a lease, while in flight: others wait for it rather than ask too. */
  asking: Promise<unknown> | undefined;
  /** Redis granted none at this time (a limit is near): ask again from then. */
  noLeaseUntil: number;
}

export interface RedisLedgerOptions {
  /** Size of a lease, in requests (redis-lease.ts); 0 admits every request in Redis. */
  readonly leaseRequests: number;
  /** Whether the connection is up: leases admit only then, so an outage answers as one at once. */
  readonly healthy: () => boolean;
  /**
   * The failover loss bound (redis-durability.ts): batches go on its connection, each followed by
   * WAIT. Leases are then not taken: each admission is confirmed on its own.
   */
  readonly confirmation?: ReplicaConfirmation;
}

/** Redis scripts cannot import one another: the shared functions and both steps are loaded before ledger.lua, which runs the batch. */
const ledgerScript = (cluster: boolean): ScriptParts => ({ prelude: ledgerPrelude(cluster), before: ['ledger-common', 'admit', 'settle'] });

export class RedisLedger implements Ledger {
  readonly #redis: RedisClient;
  /** On a Redis Cluster: each request's money has a home (keys.ts MoneyHome), and each batch keeps to one. */
  readonly #cluster: boolean;
  readonly #sendBatch: SendBatch;
  readonly #confirmation: ReplicaConfirmation | undefined;
  readonly #waiting: Pending[] = [];
  /** Settlements whose batch was not confirmed, waiting to be sent again (durability on). */
  readonly #unconfirmed: Pending[] = [];
  #retryTimer: NodeJS.Timeout | undefined;
  /** Settlements not yet confirmed (durability on): close() waits a while for them. */
  readonly #unsettled = new Set<Promise<unknown>>();
  readonly #options: RedisLedgerOptions;
  readonly #slots = new Map<string, LeaseSlot>();
  /** Leases that requests in flight were admitted against, by the request's hold id. */
  readonly #leased = new Map<string, BudgetLease>();

  constructor(redis: RedisClient, options: RedisLedgerOptions) {
    this.#redis = redis;
    this.#options = options;
    this.#cluster = redis.isCluster;
    const confirmation = options.confirmation;
    if (confirmation === undefined) {
      const run = defineScript(redis, 'ledger', this.#cluster ? undefined : 0, ledgerScript(this.#cluster));
      this.#sendBatch = this.#cluster ? (batch, keys) => run.runWithKeys(keys, [batch]) : (batch) => run.run(batch);
      return;
    }
    this.#confirmation = confirmation;
    const script = scriptSource('ledger', ledgerScript(this.#cluster));
    // The batch and its WAIT in one round trip: the batch's replies count only once confirmed.
    this.#sendBatch = (batch, keys) => confirmation.runScript(script, keys, batch);
  }

  /**
   * Admits against the user's open lease when it has room; otherwise in Redis, asking for a lease
   * with the admission while the user is far from every limit (redis-lease.ts).
   */
  admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    if (this.#confirmation) {
      try {
        this.#confirmation.refuseWhileBehind('admission');
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (this.#options.leaseRequests === 0) return this.#admitInRedis(userId, admission);
    const slotKey = slotOf(userId, admission);
    let slot = this.#slots.get(slotKey);
    if (slot === undefined) {
      slot = { lease: undefined, asking: undefined, noLeaseUntil: 0 };
      this.#slots.set(slotKey, slot);
    }
    const admitted = this.#admitOnLease(slot, admission);
    if (admitted) return Promise.resolve(admitted);
    if (slot.asking) {
      const current = slot;
      return slot.asking.then(() => this.#admitOnLease(current, admission) ?? this.#admitInRedis(userId, admission));
    }
    if (admission.now < slot.noLeaseUntil || !this.#options.healthy()) return this.#admitInRedis(userId, admission);
    return this.#askLease(slot, userId, admission);
  }

  #admitOnLease(slot: LeaseSlot, admission: Admission): AdmissionResult | undefined {
    const lease = slot.lease;
    if (lease === undefined) return undefined;
    if (this.#options.healthy() && lease.admit(admission)) {
      if (admission.reservation) this.#leased.set(admission.reservation.id, lease);
      const budget = lease.budget();
      return budget ? { ok: true, rate: lease.statuses(admission.now), budget } : { ok: true, rate: lease.statuses(admission.now) };
    }
    this.#close(slot);
    return undefined;
  }

  #askLease(slot: LeaseSlot, userId: string, admission: Admission): Promise<AdmissionResult> {
    const leaseId = `lease-${randomId()}`;
    const asking = this.#send(userId, admission, leaseId, true).then((reply) => this.#afterBusy(userId, admission, reply));
    slot.asking = asking;
    return asking.then(
      ({ result, leased }) => {
        slot.asking = undefined;
        if (leased > 0 && result.ok) {
          const lease = new BudgetLease(leaseId, userId, admission, leased, result.rate, result.budget);
          slot.lease = lease;
          setTimeout(() => slot.lease === lease && this.#close(slot), BUDGET_LEASES.openMs).unref();
        } else {
          slot.noLeaseUntil = admission.now + BUDGET_LEASES.openMs;
        }
        return result;
      },
      (error: unknown) => {
        slot.asking = undefined;
        throw error;
      },
    );
  }

  /** Admits in Redis without asking for a lease. */
  #admitInRedis(userId: string, admission: Admission): Promise<AdmissionResult> {
    return this.#send(userId, admission, '', true).then((reply) => this.#afterBusy(userId, admission, reply).then(({ result }) => result));
  }

  /** A 'busy' admission waits until the lease that made it so has been given back, then asks once more, for an answer. */
  async #afterBusy(userId: string, admission: Admission, reply: AdmitReply): Promise<{ result: AdmissionResult; leased: number }> {
    if (!('busyUntil' in reply)) return reply;
    await sleep(Math.min(Math.max(reply.busyUntil - admission.now, 0), BUDGET_LEASES.openMs + BUDGET_LEASES.graceMs));
    const again = await this.#send(userId, admission, '', false);
    if ('busyUntil' in again) throw new Error('the ledger answered busy to an admission that may not wait');
    return { result: again.result, leased: 0 };
  }

  #send(userId: string, admission: Admission, leaseId: string, mayWait: boolean): Promise<AdmitReply> {
    const { now, reservation: hold, rate } = admission;
    return new Promise((resolve, reject) => {
      this.#add({
        userId,
        home: this.#home(userId, admission.team),
        scope: rate?.scope ?? '-',
        levels: admission.levels,
        step: {
          t: 'a',
          ...stepTime(now),
          hold: hold?.id ?? '',
          micros: hold ? hold.micros.toString() : '0',
          ttl: hold?.ttlMs ?? 0,
          tokens: rate?.tokens ?? 0,
          limits: limitsOf(rate?.policy),
          lease: leaseId,
          size: this.#options.leaseRequests,
          headroom: BUDGET_LEASES.headroom,
          open_ms: BUDGET_LEASES.openMs + BUDGET_LEASES.graceMs,
          may_wait: mayWait,
        },
        resolve: (reply) => resolve(readAdmission(reply as (string | number)[])),
        reject: (error) => {
          // Durability on: a hold that may have been taken, but not confirmed, is given back
          // rather than left to expire (giving back one never taken changes nothing).
          if (this.#confirmation && mayRetry(error)) {
            this.#confirmation.count('admission');
            if (hold)
              void this.#settleStep(
                userId,
                admission.team,
                rate?.scope ?? '-',
                admission.levels,
                settleStep(now, hold, 0n, 0, undefined),
              ).catch(() => {});
          }
          reject(error);
        },
      });
    });
  }

  /** Settlements come after the answer, in the batch of the turn they are made in (see admit). */
  settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    const { now, reservation: hold, actualMicros, rate } = settlement;
    // A request admitted on a lease settles against the lease's hold.
    const lease = hold && this.#leased.get(hold.id);
    if (lease) this.#leased.delete(hold!.id);
    const step = lease ? leaseHold(lease, lease.settle(hold!.micros, actualMicros)) : hold;
    // Redis does not answer: refused at once (the hold expires by itself) rather than waiting out
    // the command timeout; with durability on, kept to be sent again (#settleStep).
    if (!this.#confirmation && !this.#options.healthy())
      return Promise.reject(new StoreUnavailableError('the store (Redis) does not answer'));
    return this.#settleStep(
      userId,
      settlement.team,
      rate?.scope ?? '-',
      settlement.levels,
      settleStep(now, step, actualMicros, rate?.tokens ?? 0, rate?.policy),
    );
  }

  #settleStep(
    userId: string,
    team: string | null | undefined,
    scope: string,
    levels: readonly OtherLevel[] | undefined,
    step: SettleStep,
  ): Promise<SettleResult> {
    const confirmation = this.#confirmation;
    if (confirmation) return this.#settleConfirmed(userId, team, scope, levels, step, confirmation);
    return new Promise((resolve, reject) => {
      this.#add({
        userId,
        home: this.#home(userId, team),
        scope,
        levels,
        step,
        resolve: (charged) => resolve({ chargedMicros: BigInt(charged as string | number) }),
        reject,
      });
    });
  }

  /**
   * Durability on: the settlement is marked with an id of its own (lua/settle.lua), and sent again
   * until a batch holding it is confirmed on the replicas, for up to `retryForMs`: a failover
   * neither loses it nor, when the first try did land, charges it twice.
   */
  #settleConfirmed(
    userId: string,
    team: string | null | undefined,
    scope: string,
    levels: readonly OtherLevel[] | undefined,
    step: SettleStep,
    confirmation: ReplicaConfirmation,
  ): Promise<SettleResult> {
    const since = Date.now();
    const { retryForMs } = confirmation.settings;
    const marked: SettleStep = {
      ...step,
      sk: keys.settled(userId, randomId(), this.#home(userId, team)),
      keep: markKeptMs(confirmation.settings),
    };
    const settled = new Promise<SettleResult>((resolve, reject) => {
      const entry: Pending = {
        userId,
        home: this.#home(userId, team),
        scope,
        levels,
        step: marked,
        resolve: (charged) => resolve({ chargedMicros: BigInt(charged as string | number) }),
        reject: (error) => {
          if (!mayRetry(error)) return reject(error);
          confirmation.count('settlement');
          if (Date.now() - since < retryForMs) this.#sendAgain(entry);
          else reject(error);
        },
      };
      if (this.#options.healthy() && !confirmation.behind) this.#add(entry);
      else this.#sendAgain(entry);
    });
    this.#unsettled.add(settled);
    const done = () => this.#unsettled.delete(settled);
    settled.then(done, done);
    return settled;
  }

  /** Sends the settlement again in a while, with the others not yet confirmed. */
  #sendAgain(entry: Pending): void {
    this.#unconfirmed.push(entry);
    this.#retryTimer ??= setTimeout(() => {
      this.#retryTimer = undefined;
      for (const again of this.#unconfirmed.splice(0)) this.#add(again);
    }, RETRY_DELAY_MS);
  }

  /** Settlements not yet confirmed on the replicas (durability on), being sent again. */
  get pendingSettlements(): number {
    return this.#unsettled.size;
  }

  /** Waits up to `ms` for the settlements not yet confirmed (durability on), so a gateway that stops loses none it could still send. */
  async drain(ms: number): Promise<void> {
    if (this.#unsettled.size === 0) return;
    const timer = sleep(ms, undefined, { ref: false });
    await Promise.race([Promise.allSettled([...this.#unsettled]), timer]);
  }

  /** Ends the slot's lease: its hold shrinks to what requests in flight hold, and its unused rate-limit room goes back. */
  #close(slot: LeaseSlot): Promise<unknown> {
    const lease = slot.lease;
    if (lease === undefined) return Promise.resolve();
    slot.lease = undefined;
    const { hold, unused } = lease.close();
    if (hold.before === hold.after && unused.every((n) => n === 0)) return Promise.resolve();
    // On the lease's clock (admissions carry their own `now`), never past its end.
    const now = Math.min(Math.max(Date.now(), lease.grantedAt), lease.grantedAt + BUDGET_LEASES.openMs);
    return this.#settleStep(
      lease.userId,
      lease.team,
      lease.scope,
      lease.levels,
      settleStep(now, leaseHold(lease, hold), 0n, 0, undefined, { grantedAt: lease.grantedAt, unused }),
    ).catch(() => {
      // Redis is unreachable: the hold expires by itself, and the rate-limit room with its window.
    });
  }

  /**
   * Gives back the leases charged to one subject (a user, key or team whose budget or limits
   * changed: an id, or ledger.ts subjectOf()) or, with null, all of them (shutting down, or the
   * routers changed). Resolves when Redis has them back.
   */
  closeLeases(subject: string | null): Promise<unknown> {
    const closing: Promise<unknown>[] = [];
    for (const slot of this.#slots.values()) {
      if (slot.lease && (subject === null || slot.lease.charges(subject))) closing.push(this.#close(slot));
    }
    return Promise.all(closing);
  }

  /** A batch failed (Redis unreachable): stop admitting on leases; their holds expire by themselves. */
  #dropLeases(): void {
    for (const slot of this.#slots.values()) {
      slot.lease?.close();
      slot.lease = undefined;
    }
  }

  #add(step: Pending): void {
    this.#waiting.push(step);
    if (this.#waiting.length >= MAX_BATCH) this.#flush();
    else if (this.#waiting.length === 1) setImmediate(() => this.#flush());
  }

  #flush(): void {
    runBatches(
      this.#waiting,
      this.#sendBatch,
      () => this.#dropLeases(),
      (alerts) => this.#writeAlerts(alerts),
    );
  }

  /** Where a user's money lives: on a cluster, the team's slot or the user's own; undefined on one Redis. */
  #home(userId: string, team: string | null | undefined): MoneyHome | undefined {
    return this.#cluster ? { user: userId, team: team ?? undefined } : undefined;
  }

  /**
   * On a cluster, the alerts a batch raised, written to the alerts stream (another slot) after
   * it. Lost if Redis refuses them now: the level records them as raised (docs/redis.md).
   */
  #writeAlerts(alerts: string[]): void {
    const pipeline = this.#redis.pipeline();
    for (const alert of alerts) pipeline.xadd(keys.alerts, 'MAXLEN', '~', ALERTS_KEPT, '*', 'a', alert);
    pipeline.exec().catch(() => {});
  }

  async balance(subject: string, now: number, owner?: string): Promise<Balance> {
    if (!this.#cluster) return readBalance(this.#redis, subject, now);
    if (subject.startsWith('team:')) return readBalance(this.#redis, subject, now, { user: '', team: undefined });
    const user = subject.startsWith('key:') ? owner : subject;
    if (user === undefined) throw new TypeError(`a cluster's ledger needs the user of ${subject}`);
    const spec = await this.#redis.hget(keys.user(user), 'spec');
    const team = spec === null ? undefined : ((JSON.parse(spec) as { team?: string | null }).team ?? undefined);
    return readBalance(this.#redis, subject, now, { user, team });
  }
}

/** Requests share a lease when they have the same user, router and other levels. */
function slotOf(userId: string, admission: Admission): string {
  const slot = `${userId}\u0000${admission.rate?.scope ?? '-'}\u0000${admission.team ?? ''}`;
  const levels = admission.levels;
  if (levels === undefined || levels.length === 0) return slot;
  let out = slot;
  for (const level of levels) out += `\u0000${subjectOf(level)}`;
  return out;
}
