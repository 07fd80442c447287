// Sessions and sign-ins under way, in one process: each entry dropped when it is read past its
// end, and the ended ones swept as new ones come, so they never grow past what is live.
import { secretHash, type PendingSignIn, type SessionRecord, type SignInStore } from '../sign-ins.ts';

interface Entry<T> {
  readonly value: T;
  readonly until: number;
}

export class MemorySignIns implements SignInStore {
  readonly #sessions = new Map<string, Entry<SessionRecord>>();
  readonly #pending = new Map<string, Entry<PendingSignIn>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Sessions and sign-ins held, ended ones not yet swept included. */
  get size(): number {
    return this.#sessions.size + this.#pending.size;
  }

  async createSession(secret: string, session: SessionRecord, ttlMs: number): Promise<void> {
    this.#put(this.#sessions, secret, session, ttlMs);
  }

  async session(secret: string): Promise<SessionRecord | undefined> {
    return this.#get(this.#sessions, secretHash(secret));
  }

  async endSession(secret: string): Promise<boolean> {
    const hash = secretHash(secret);
    const live = this.#get(this.#sessions, hash) !== undefined;
    this.#sessions.delete(hash);
    return live;
  }

  async beginSignIn(state: string, pending: PendingSignIn, ttlMs: number): Promise<void> {
    this.#put(this.#pending, state, pending, ttlMs);
  }

  async takeSignIn(state: string): Promise<PendingSignIn | undefined> {
    const hash = secretHash(state);
    const pending = this.#get(this.#pending, hash);
    this.#pending.delete(hash);
    return pending;
  }

  #put<T>(entries: Map<string, Entry<T>>, secret: string, value: T, ttlMs: number): void {
    const now = this.#now();
    for (const [hash, entry] of entries) if (entry.until <= now) entries.delete(hash);
    entries.set(secretHash(secret), { value, until: now + ttlMs });
  }

  #get<T>(entries: Map<string, Entry<T>>, hash: string): T | undefined {
    const entry = entries.get(hash);
    if (entry === undefined) return undefined;
    if (entry.until > this.#now()) return entry.value;
    entries.delete(hash);
    return undefined;
  }
}
