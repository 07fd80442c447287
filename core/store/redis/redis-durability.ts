// The bound on what a Redis failover may lose (docs/redis.md#what-a-failover-may-lose). Redis
// replicates asynchronously: a write the primary acknowledged may die with it, before any replica
// has it. With the bound on, a write that moves money or access (a ledger batch, a user, key or
// team change) is followed by WAIT on the same connection, which returns once `replicas` replicas
// have every write that connection made, or after `timeoutMs` with how many did. A write not
// confirmed in time is treated as not made: an admission is refused (503) and its hold given back,
// an admin change answers 503, and a settlement is sent again until it is confirmed (lua/settle.lua
// marks each one done, so sending it again never charges twice).
//
// On a Redis Cluster, each primary replicates its own slots: a ledger batch (one slot) is followed
// by WAIT on the connection to that slot's primary, in one pipeline; an account change (several
// slots, perhaps several primaries) by WAIT on every primary's connection. One primary whose
// replicas fall behind refuses new writes everywhere, until it catches up.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from 'ioredis';
import { relearnSlots, type RedisClient } from './redis-client.ts';
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

/** Answers of a cluster node to a command it did not run, as it serves no longer (or not yet) the slot. */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;
/** How often a batch redirected so is sent again, and after how long when not told where (TRYAGAIN, CLUSTERDOWN). */
const MAX_REDIRECTIONS = 100;
const REDIRECT_DELAY_MS = 50;

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
  readonly connection: RedisClient;
  readonly settings: Durability;
  readonly #counts: Record<UnconfirmedWrite, number> = { admission: 0, settlement: 0, change: 0 };
  #behind = false;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(connection: RedisClient, settings: Durability) {
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
  async runScript(script: ScriptSource, keys: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    if (this.connection.isCluster) return this.#runOnSlot(script, keys, args);
    const { replicas, timeoutMs } = this.settings;
    const ran = this.connection.evalsha(script.sha, keys.length, ...keys, ...args);
    // Handled as it is made: both fail together when Redis goes, and the script's failure is the
    // one told (a WAIT that failed confirmed nothing: 0).
    const confirmation = () => this.connection.wait(replicas, timeoutMs).catch(() => 0);
    let waited = confirmation();
    let reply: unknown;
    try {
      reply = await ran;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      reply = await this.connection.eval(script.lua, keys.length, ...keys, ...args);
      waited = confirmation();
    }
    this.#check(await waited);
    return reply;
  }

  /**
   * On a cluster: the script and WAIT in one pipeline, which goes to the primary of the keys' slot
   * (WAIT has no key, and follows them); EVAL and WAIT again on NOSCRIPT.
   */
  async #runOnSlot(script: ScriptSource, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const { replicas, timeoutMs } = this.settings;
    const send = async (first: 'evalsha' | 'eval') => {
      const pipeline = this.connection.pipeline();
      if (first === 'evalsha') pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
      else pipeline.eval(script.lua, keys.length, ...keys, ...args);
      pipeline.call('WAIT', replicas, timeoutMs);
      const [[error, reply] = [new Error('no reply'), null], [, waited] = [null, 0]] = (await pipeline.exec()) ?? [];
      return { error, reply, waited };
    };
    let first: 'evalsha' | 'eval' = 'evalsha';
    for (let attempt = 1; ; attempt++) {
      const sent = await send(first);
      const message = sent.error?.message ?? '';
      if (message.startsWith('NOSCRIPT') && first === 'evalsha') {
        first = 'eval';
        continue;
      }
      // The pipeline went to a node that no longer serves the slot (a failover, a slot moved):
      // ioredis sends it again only when every command of it was redirected, and WAIT was not.
      // The script did not run: learn the slots again, and send it to the right primary.
      if (REDIRECTED.test(message) && attempt < MAX_REDIRECTIONS) {
        await relearnSlots(this.connection as Cluster);
        if (!message.startsWith('MOVED')) await sleep(REDIRECT_DELAY_MS);
        continue;
      }
      if (sent.error) throw sent.error;
      this.#check(sent.waited);
      return sent.reply;
    }
  }

  /**
   * Waits until the replicas have every write made on the connection so far (an account change
   * just made there); on a cluster, on every primary's connection.
   */
  async confirm(): Promise<void> {
    this.#check(await unavailable(() => this.#waitEverywhere()));
  }

  /**
   * WAIT on the connection, or on each primary's of a cluster: the fewest replicas that confirmed.
   * `relearn`: the cluster's primaries are learned again first (after a failover, refused writes
   * send nothing that would make the client learn of the promoted primary).
   */
  async #waitEverywhere(relearn = false): Promise<number> {
    const { replicas, timeoutMs } = this.settings;
    if (!this.connection.isCluster) return this.connection.wait(replicas, timeoutMs);
    const cluster = this.connection as Cluster;
    if (relearn) await relearnSlots(cluster);
    const counts = await Promise.all(cluster.nodes('master').map((node) => node.wait(replicas, timeoutMs)));
    return counts.length === 0 ? 0 : Math.min(...counts);
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
        this.#waitEverywhere(true).then(
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
