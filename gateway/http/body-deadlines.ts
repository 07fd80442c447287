// How long a client may take to send a request's body. Without a bound, a client that sends
// part of a body and stops holds its connection and what was read of it for ever: 30 stalled
// 25 MB uploads held 600 MB. A body must arrive whole within `totalMs` of its first byte being
// waited for, and never go `idleMs` without a byte; past either the body parser answers 408 in
// the API's envelope and the connection closes.
//
// One sweep, on a timer, checks every body being read, rather than a timer per body re-armed on
// every chunk: a chunk only adds to a counter, and most bodies arrive in one turn.
import { realTimers, type Timers } from '../../core/timers.ts';
import type { BodyExpiry } from '../api/body-faults.ts';

export type { BodyExpiry };

export interface BodyTimeouts {
  /** Longest a whole body may take to arrive (ms). */
  readonly totalMs: number;
  /** Longest a body may go without a byte (ms). */
  readonly idleMs: number;
}

/** A body being read: what its reader tells of it. */
export interface BodyWatch {
  /** Bytes arrived (counted only to notice that some did). */
  received(bytes: number): void;
  /** The body is read (or refused): it is no longer watched. */
  stop(): void;
}

interface Watched extends BodyWatch {
  /** Its place in the list of bodies watched; -1 once it is not. */
  at: number;
  readonly startedAt: number;
  bytes: number;
  /** Bytes at the last sweep that saw them change, and when. */
  seenBytes: number;
  seenAt: number;
  readonly expired: (why: BodyExpiry, ms: number) => void;
}

export class BodyDeadlines {
  readonly #timeouts: BodyTimeouts;
  readonly #timers: Timers;
  readonly #now: () => number;
  /**
   * The bodies being read, each knowing its place: removing one swaps the last into it. A Set
   * cost more than the rest of the watch (a body is added and removed on every request, and the
   * Set's table grows and shrinks with the load: 1.3 µs a request, profiled 2026-11-27).
   */
  readonly #watched: Watched[] = [];
  /** How often the sweep runs: a fraction of the shorter bound, so a body is refused within about a quarter of it past its bound. */
  readonly #everyMs: number;
  #timer: unknown;
  #closed = false;

  constructor(timeouts: BodyTimeouts, options: { timers?: Timers; now?: () => number } = {}) {
    this.#timeouts = timeouts;
    this.#timers = options.timers ?? realTimers;
    this.#now = options.now ?? (() => performance.now());
    this.#everyMs = Math.max(5, Math.min(1000, Math.min(timeouts.totalMs, timeouts.idleMs) / 4));
  }

  /** Watches one body from now; `expired` is called at most once, when it takes too long (with the bound it passed, ms). */
  watch(expired: (why: BodyExpiry, ms: number) => void): BodyWatch {
    const now = this.#now();
    const watched: Watched = {
      at: this.#watched.length,
      startedAt: now,
      bytes: 0,
      seenBytes: 0,
      seenAt: now,
      expired,
      received(bytes) {
        watched.bytes += bytes;
      },
      stop: () => this.#remove(watched),
    };
    this.#watched.push(watched);
    if (this.#timer === undefined && !this.#closed) this.#schedule();
    return watched;
  }

  close(): void {
    this.#closed = true;
    this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      this.#sweep();
      if (this.#watched.length > 0 && !this.#closed) this.#schedule();
    }, this.#everyMs);
  }

  #sweep(): void {
    const now = this.#now();
    const { totalMs, idleMs } = this.#timeouts;
    // From the end: a body removed takes the last one's place, which has been looked at.
    for (let i = this.#watched.length - 1; i >= 0; i--) {
      const watched = this.#watched[i]!;
      if (watched.bytes !== watched.seenBytes) {
        watched.seenBytes = watched.bytes;
        watched.seenAt = now;
      }
      const why: BodyExpiry | undefined =
        now - watched.startedAt >= totalMs ? 'total' : now - watched.seenAt >= idleMs ? 'idle' : undefined;
      if (why) {
        this.#remove(watched);
        watched.expired(why, why === 'total' ? totalMs : idleMs);
      }
    }
  }

  #remove(watched: Watched): void {
    const { at } = watched;
    if (at < 0) return;
    watched.at = -1;
    const last = this.#watched.pop()!;
    if (last !== watched) {
      this.#watched[at] = last;
      last.at = at;
    }
  }
}
