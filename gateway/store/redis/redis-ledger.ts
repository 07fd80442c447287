// The ledger on Redis: admission and settlement are each one step of a Lua script (lua/admit.lua,
// lua/settle.lua), so every change of money and limits is atomic across all gateways. The
// admissions and settlements of one turn of the event loop go in one script call (lua/ledger.lua),
// as one JSON argument, and come back as one JSON reply (lua/ledger-common.lua says why).
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { RateLimitName, RateLimitPolicy } from '../../resources/limits.ts';
import type { BudgetPeriod } from '../../resources/user.ts';
import type { Admission, AdmissionResult, Balance, Ledger, RateStatuses, Settlement, SettleResult } from '../ledger.ts';
import { periodIndex, periodIndices, periodLabel, periodStart } from '../periods.ts';
import { keys } from './keys.ts';

const script = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
// Redis scripts cannot import one another: the four files are loaded as one script, the shared
// functions first and ledger.lua, which runs the batch, last.
const LEDGER = ['ledger-common', 'admit', 'settle', 'ledger'].map(script).join('\n');

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** Most admissions and settlements sent in one script call. */
const MAX_BATCH = 128;

/** A step waiting for its batch: whose keys it uses, its kind and arguments, what to do with its reply. */
interface Pending {
  readonly userId: string;
  /** The router whose rate-limit windows it counts in ('-' when none). */
  readonly scope: string;
  /** 'a' (admission) or 's' (settlement), then the step's arguments (lua/admit.lua, lua/settle.lua). */
  readonly args: string[];
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Sends the waiting requests in one script call and hands each its own reply. Each user's keys
 * go once per batch (`k`), and each request names its set by position (`r`: index, arguments):
 * the keys are most of a request's bytes, and a batch often holds several requests of one user.
 */
function runBatch(waiting: Pending[], script: ScriptCall): void {
  const batch = waiting.splice(0, waiting.length);
  if (batch.length === 0) return;
  const keySets: string[][] = [];
  const positions = new Map<string, number>();
  const requests = batch.map(({ userId, scope, args }) => {
    const id = `${userId}\u0000${scope}`;
    let position = positions.get(id);
    if (position === undefined) {
      position = keySets.push(userKeys(userId, scope)); // 1-based, as Lua counts
      positions.set(id, position);
    }
    return [position, ...args];
  });
  script(0, JSON.stringify({ k: keySets, r: requests })).then(
    (replies) => {
      const parsed = JSON.parse(replies as string) as unknown[];
      batch.forEach((entry, i) => entry.resolve(parsed[i]));
    },
    (error: unknown) => batch.forEach((entry) => entry.reject(error)),
  );
}

function readAdmission(reply: (string | number)[]): AdmissionResult {
  switch (reply[0]) {
    case 'unknown_user':
      return { ok: false, reason: 'unknown_user' };
    case 'budget':
      return { ok: false, reason: 'budget', remainingMicros: BigInt(reply[1]!) };
    case 'rate':
      return { ok: false, reason: 'rate', limit: reply[1] as RateLimitName, retryAfterMs: Number(reply[2]), rate: readStatuses(reply, 3) };
    default:
      return { ok: true, rate: readStatuses(reply, 1) };
  }
}

export class RedisLedger implements Ledger {
  readonly #redis: Redis;
  readonly #run: ScriptCall;
  readonly #waiting: Pending[] = [];

  constructor(redis: Redis) {
    this.#redis = redis;
    // defineCommand calls EVALSHA, and EVAL when Redis has lost the script (NOSCRIPT).
    redis.defineCommand('tollgateLedger', { lua: LEDGER });
    this.#run = (redis as unknown as Record<string, ScriptCall>).tollgateLedger!.bind(redis);
  }

  /**
   * Admissions and settlements of one turn of the event loop (at most MAX_BATCH) go to Redis in
   * one script call, each one atomic step of it, in order: one write and one reply for many
   * requests. Several batches may be in flight at once.
   */
  admit(userId: string, admission: Admission): Promise<AdmissionResult> {
    const { now, reservation: hold, rate } = admission;
    return new Promise((resolve, reject) => {
      this.#add({
        userId,
        scope: rate?.scope ?? '-',
        args: ['a', String(now), ...indices(now), hold?.id ?? '', hold ? hold.micros.toString() : '0', String(hold?.ttlMs ?? 0), String(rate?.tokens ?? 0), ...limitArgs(rate?.policy)],
        resolve: (reply) => resolve(readAdmission(reply as (string | number)[])),
        reject,
      });
    });
  }

  /** Settlements come after the answer, in the batch of the turn they are made in (see admit). */
  settle(userId: string, settlement: Settlement): Promise<SettleResult> {
    const { now, reservation: hold, rate } = settlement;
    const [, , tokensPerMinute, tokensPerDay] = limitArgs(rate?.policy);
    return new Promise((resolve, reject) => {
      this.#add({
        userId,
        scope: rate?.scope ?? '-',
        args: ['s', String(now), ...indices(now), hold?.id ?? '', hold ? hold.micros.toString() : '0', settlement.actualMicros.toString(), String(rate?.tokens ?? 0), tokensPerMinute!, tokensPerDay!],
        resolve: (charged) => resolve({ chargedMicros: BigInt(charged as string | number) }),
        reject,
      });
    });
  }

  #add(step: Pending): void {
    this.#waiting.push(step);
    if (this.#waiting.length >= MAX_BATCH) this.#flush();
    else if (this.#waiting.length === 1) setImmediate(() => this.#flush());
  }

  #flush(): void {
    runBatch(this.#waiting, this.#run);
  }

  async balance(userId: string, now: number): Promise<Balance> {
    const replies = await this.#redis
      .multi()
      .hmget(keys.user(userId), 'budget', 'period')
      .hmget(keys.ledger(userId), 'ptype', 'pidx', 'spent')
      .zrangebyscore(keys.holds(userId), `(${now}`, '+inf')
      .hgetall(keys.history(userId))
      .exec();
    const [[budget, periodText], [ptype, pidx, spent], live, historyRaw] = (replies ?? []).map(([, value]) => value) as [
      (string | null)[], (string | null)[], string[], Record<string, string>,
    ];
    const period = (periodText || null) as BudgetPeriod | null;
    const index = period ? periodIndex(period, now) : 0;
    // A period that has ended since the last request counts as nothing spent yet.
    const current = (ptype ?? '') === (period ?? '') && Number(pidx ?? 0) >= index;
    const history: Record<string, bigint> = {};
    for (const [key, micros] of Object.entries(historyRaw ?? {})) {
      const [kind, idx] = key.split(':') as [string, string];
      history[periodLabel((kind || null) as BudgetPeriod | null, Number(idx))] = BigInt(micros);
    }
    return {
      budgetMicros: budget ? BigInt(budget) : null,
      period,
      spentMicros: current ? BigInt(spent ?? 0) : 0n,
      reservedMicros: (live ?? []).reduce((sum, member) => sum + BigInt(member.slice(member.lastIndexOf('|') + 1)), 0n),
      periodStart: period ? periodStart(period, index) : null,
      periodEnd: period ? periodStart(period, index + 1) : null,
      history,
    };
  }
}

function userKeys(userId: string, scope: string): string[] {
  return [keys.user(userId), keys.ledger(userId), keys.holds(userId), keys.history(userId), keys.rate(userId, scope)];
}

function indices(now: number): string[] {
  const { daily, weekly, monthly } = periodIndices(now);
  return [String(daily), String(weekly), String(monthly)];
}

/** The four limits in the scripts' order, '' for "no limit". */
function limitArgs(policy: RateLimitPolicy | undefined): string[] {
  return [policy?.requests_per_minute, policy?.requests_per_day, policy?.tokens_per_minute, policy?.tokens_per_day].map((v) => (v === undefined ? '' : String(v)));
}

function readStatuses(reply: (string | number)[], from: number): RateStatuses {
  const out: RateStatuses = {};
  for (let i = from; i + 3 < reply.length; i += 4) {
    out[reply[i] as RateLimitName] = { limit: Number(reply[i + 1]), remaining: Number(reply[i + 2]), resetMs: Number(reply[i + 3]) };
  }
  return out;
}
