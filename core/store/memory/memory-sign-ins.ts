// Sessions and sign-ins under way, in one process: each entry dropped when it is read past its
// end, and the ended ones swept oldest first as new ones come (expiring-entries.ts), so they never
// grow past what is live and a sweep never walks the live ones. Sign-ins under way are counted in
// all and per client, for their bounds.
import {
  secretHash,
  type PendingSignIn,
  type SessionRecord,
  type SignInAdmission,
  type SignInStart,
  type SignInStore,
} from '../sign-ins.ts';
import { ExpiringEntries } from './expiring-entries.ts';

interface Pending {
  readonly pending: PendingSignIn;
  readonly client: string;
}

export class MemorySignIns implements SignInStore {
  readonly #sessions = new ExpiringEntries<SessionRecord>();
  readonly #pending = new ExpiringEntries<Pending>(({ client }) => this.#release(client));
  /** Sign-ins under way (ended ones not yet swept included) by client. */
  readonly #perClient = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Sessions and sign-ins held, ended ones not yet swept included. */
  get size(): number {
    return this.#sessions.size + this.#pending.size;
  }

  /** Entries the sweeps have looked at, in all: it grows with the ended entries swept, never with the live ones. */
  get sweepVisits(): number {
    return this.#sessions.visited + this.#pending.visited;
  }

  async createSession(secret: string, session: SessionRecord, ttlMs: number): Promise<void> {
    const now = this.#now();
    this.#sessions.sweep(now);
    this.#sessions.set(secretHash(secret), session, now + ttlMs);
  }

  async session(secret: string): Promise<SessionRecord | undefined> {
    return this.#sessions.get(secretHash(secret), this.#now());
  }

  async endSession(secret: string): Promise<boolean> {
    return this.#sessions.take(secretHash(secret), this.#now()) !== undefined;
  }

  async beginSignIn(state: string, pending: PendingSignIn, start: SignInStart): Promise<SignInAdmission> {
    const now = this.#now();
    this.#pending.sweep(now);
    if (this.#pending.size >= start.limits.total) return 'too_many';
    const fromClient = this.#perClient.get(start.client) ?? 0;
    if (fromClient >= start.limits.perClient) return 'too_many_from_client';
    this.#pending.set(secretHash(state), { pending, client: start.client }, now + start.ttlMs);
    this.#perClient.set(start.client, fromClient + 1);
    return 'begun';
  }

  async takeSignIn(state: string): Promise<PendingSignIn | undefined> {
    return this.#pending.take(secretHash(state), this.#now())?.pending;
  }

  #release(client: string): void {
    const left = (this.#perClient.get(client) ?? 1) - 1;
    if (left > 0) this.#perClient.set(client, left);
    else this.#perClient.delete(client);
  }
}
