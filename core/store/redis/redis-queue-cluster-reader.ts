// A router worker's reads of the streams on a Redis Cluster. A stream is named by the spec
// (`router.<name>`), so each router's is in a slot of its own, and one XREADGROUP cannot read two
// (CROSSSLOT); nor can two reads that block share a connection (the second waits for the first).
// So each router is read on a connection of its own, all at once: a read hands out what any of
// them took, and the others go on blocking, what they take kept for the next read.
import type { RedisClient } from './redis-client.ts';
import type { QueueReader, TakenEntry } from '../routing-queue.ts';
import type { QueueKeyNames } from './queue-keys.ts';
import { readStreams } from './redis-queue-streams.ts';

interface RouterRead {
  readonly connection: RedisClient;
  /** The read under way, if any. */
  pending: Promise<void> | undefined;
}

export class ClusterStreamReader implements QueueReader {
  readonly #connect: () => RedisClient;
  readonly #names: QueueKeyNames;
  readonly #reads = new Map<string, RouterRead>();
  /** Taken by the reads and not handed out yet, by router. */
  #taken = new Map<string, TakenEntry[]>();
  /** A read that failed, told by the next read() (the worker retries). */
  #failure: unknown;
  /** Wakes the read() that waits for one of the router reads to end. */
  #wake: (() => void) | undefined;

  /** `connect` opens a connection whose reads may block (the store's blocking connection). */
  constructor(connect: () => RedisClient, names: QueueKeyNames) {
    this.#connect = connect;
    this.#names = names;
  }

  async read(consumer: string, routers: readonly string[], count: number, blockMs: number): Promise<Map<string, TakenEntry[]>> {
    const served = new Set(routers);
    for (const [router, read] of this.#reads) {
      if (served.has(router)) continue;
      // A router no longer served: its read ends with its connection; an entry it took is claimed by a worker later.
      read.connection.disconnect();
      this.#reads.delete(router);
    }
    for (const router of routers) this.#start(router, consumer, count, blockMs);
    if (this.#taken.size === 0 && this.#failure === undefined) await new Promise<void>((resolve) => (this.#wake = resolve));
    const failure = this.#failure;
    this.#failure = undefined;
    const taken = this.#taken;
    this.#taken = new Map();
    // What was taken is handed out even when another read failed; the failure is told next time.
    if (taken.size === 0 && failure !== undefined) throw failure;
    if (failure !== undefined) this.#failure = failure;
    return taken;
  }

  get connected(): boolean {
    return [...this.#reads.values()].every((read) => read.connection.status === 'ready');
  }

  close(): void {
    for (const read of this.#reads.values()) read.connection.disconnect();
    this.#reads.clear();
    this.#wake?.();
  }

  #start(router: string, consumer: string, count: number, blockMs: number): void {
    let read = this.#reads.get(router);
    if (!read) {
      read = { connection: this.#connect(), pending: undefined };
      this.#reads.set(router, read);
    }
    if (read.pending) return;
    const current = read;
    current.pending = readStreams(current.connection, this.#names, consumer, [router], count, blockMs)
      .then(
        (byRouter) => {
          for (const [name, entries] of byRouter) this.#taken.set(name, [...(this.#taken.get(name) ?? []), ...entries]);
        },
        (error: unknown) => {
          // A read cut short by close() or a router no longer served is no failure.
          if (this.#reads.get(router) === current) this.#failure ??= error;
        },
      )
      .finally(() => {
        current.pending = undefined;
        const wake = this.#wake;
        this.#wake = undefined;
        wake?.();
      });
  }
}
