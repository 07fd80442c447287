// The bound on what a Redis failover may lose (docs/redis.md#what-a-failover-may-lose). Redis
// replicates asynchronously: a write the primary acknowledged may die with it, before any replica
// has it. With the bound on, a write that moves money or access (a ledger batch, a user, key or
// team change) is followed by WAIT on the same connection, which returns once `replicas` replicas
// have every write that connection made, or after `timeoutMs` with how many did. A write not
// confirmed in time is treated as not made: an admission is refused (503) and its hold given back,
// an admin change answers 503, and a settlement is sent again until it is confirmed (lua/settle.lua
// marks each one done, so sending it again never charges twice).
import type { Redis } from 'ioredis';
import type { ScriptSource } from './scripts.ts';
import { ReplicasUnconfirmedError, StoreUnavailableError } from '../store-errors.ts';
import { isConnectionError, unavailable } from './unavailable.ts';

export interface Durability {
  /** Replicas that must have a write before it counts as made; 0 turns the bound off. */
  readonly replicas: number;
  /** How long WAIT waits for them (ms). */
  readonly timeoutMs: number;
  /** How long a settlement not yet confirmed is sent again, before it is given up (logged; its hold then expires). */
  readonly retryForMs: number;
}

/** The writes the bound confirms, as /metrics counts those the replicas did not confirm in time. */
export type UnconfirmedWrite = 'admission' | 'settlement' | 'change';

/** What /readyz and /metrics show of the bound (durability on). */
export interface DurabilityView {
  /** Replicas asked to confirm each write. */
  readonly waitReplicas: number;
  /** Tries the replicas did not confirm in time (or Redis did not answer), by kind of write, since the process started. */
  readonly unconfirmed: Readonly<Record<UnconfirmedWrite, number>>;
  /** Settlements not yet confirmed, being sent again. */
  readonly pendingSettlements: number;
}

/** The bound off: writes count once the primary has them (Redis' own default). */
export const NO_DURABILITY: Durability = { replicas: 0, timeoutMs: 0, retryForMs: 0 };

/** Between two sendings of settlements not yet confirmed. */
export const RETRY_DELAY_MS = 250;

/**
 * How long a settlement's mark (lua/settle.lua) is kept: past the last time it may be sent again,
 * with room for a clock that runs ahead of Redis' own.
 */
export function markKeptMs(durability: Durability): number {
  return durability.retryForMs + 60_000;
}

/**
 * The replicas' confirmation of the writes made on one connection (its WAITs block it, so the
 * writes that need confirming go on one of their own). Once a write is not confirmed in time,
 * further writes are refused at once (ReplicasUnconfirmedError) rather than each waiting out the
 * timeout in a line behind the others, until a WAIT, sent four times a second, is confirmed.
 */
export class ReplicaConfirmation {
  readonly connection: Redis;
  readonly settings: Durability;
  readonly #counts: Record<UnconfirmedWrite, number> = { admission: 0, settlement: 0, change: 0 };
  #behind = false;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(connection: Redis, settings: Durability) {
    this.connection = connection;
    this.settings = settings;
  }

  /** Whether a write was not confirmed lately: new ones are refused until the replicas catch up. */
  get behind(): boolean {
    return this.#behind;
  }

  /** Tries not confirmed in time, by kind of write. */
  get counts(): Readonly<Record<UnconfirmedWrite, number>> {
    return { ...this.#counts };
  }

  /** Counts a try of `write` that was not confirmed (or that Redis did not answer). */
  count(write: UnconfirmedWrite): void {
    this.#counts[write]++;
  }

  /** Throws at once (counted) while the replicas are behind. */
  refuseWhileBehind(write: UnconfirmedWrite): void {
    if (!this.#behind) return;
    this.#counts[write]++;
    throw new ReplicasUnconfirmedError(
      `the store's (Redis) replicas have not confirmed the latest writes: new ones are refused until they do (${this.#counts[write]} so far)`,
      false,
    );
  }

  /**
   * Runs `script` (EVALSHA) and WAIT right behind it on the connection, in one round trip without
   * a pipeline (ioredis copies every script defined on a client onto each pipeline it makes);
   * resolves with the script's reply once confirmed. Redis without the script (restarted, or a
   * replica just promoted) answers NOSCRIPT, and the WAIT behind it then confirmed nothing of
   * ours: the script is sent whole (EVAL), and WAIT again.
   */
  async runScript(script: ScriptSource, ...args: (string | number)[]): Promise<unknown> {
    const { replicas, timeoutMs } = this.settings;
    const ran = this.connection.evalsha(script.sha, 0, ...args);
    let waited = this.connection.wait(replicas, timeoutMs);
    let reply: unknown;
    try {
      reply = await ran;
    } catch (error) {
      waited.catch(() => {});
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      reply = await this.connection.eval(script.lua, 0, ...args);
      waited = this.connection.wait(replicas, timeoutMs);
    }
    this.#check(await waited.catch(() => 0));
    return reply;
  }

  /** Waits until the replicas have every write made on the connection so far (an account change just made there). */
  async confirm(): Promise<void> {
    this.#check(await unavailable(() => this.connection.wait(this.settings.replicas, this.settings.timeoutMs)));
  }

  #check(confirmed: unknown): void {
    if (typeof confirmed === 'number' && confirmed >= this.settings.replicas) {
      this.#caughtUp();
      return;
    }
    this.#fellBehind();
    const { replicas, timeoutMs } = this.settings;
    throw new ReplicasUnconfirmedError(
      `the store (Redis) did not confirm the write on ${replicas} replica${replicas === 1 ? '' : 's'} within ${timeoutMs} ms (${Number(confirmed) || 0} did): a failover could lose it`,
      true,
    );
  }

  #caughtUp(): void {
    this.#behind = false;
    clearTimeout(this.#probe);
    this.#probe = undefined;
  }

  /** Refuses new writes, and asks again (a bare WAIT) until the replicas have caught up. */
  #fellBehind(): void {
    this.#behind = true;
    if (this.#probe !== undefined || this.#closed) return;
    const probe = () => {
      this.#probe = setTimeout(() => {
        this.connection.wait(this.settings.replicas, this.settings.timeoutMs).then(
          (confirmed) => (confirmed >= this.settings.replicas ? this.#caughtUp() : !this.#closed && probe()),
          () => !this.#closed && probe(),
        );
      }, RETRY_DELAY_MS);
      this.#probe.unref();
    };
    probe();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#probe);
  }
}

/** Whether a failed write may be sent again: Redis did not answer, or the replicas did not confirm it. */
export function mayRetry(error: unknown): boolean {
  return error instanceof StoreUnavailableError || isConnectionError(error);
}
