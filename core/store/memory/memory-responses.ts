// Stored responses of a single process, per user, for the retention; at most MAX_PER_USER a user
// (the oldest go first), so a process never grows without bound.
import type { ResponseStore, StoredResponse } from '../responses.ts';

const MAX_PER_USER = 10_000;

export class MemoryResponses implements ResponseStore {
  readonly #byUser = new Map<string, Map<string, { stored: StoredResponse; expires: number }>>();
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(retentionMs: number, now: () => number = Date.now) {
    this.#retentionMs = retentionMs;
    this.#now = now;
  }

  async put(userId: string, id: string, stored: StoredResponse): Promise<void> {
    let responses = this.#byUser.get(userId);
    if (!responses) {
      responses = new Map();
      this.#byUser.set(userId, responses);
    }
    responses.set(id, { stored: structuredClone(stored), expires: this.#now() + this.#retentionMs });
    if (responses.size > MAX_PER_USER) responses.delete(responses.keys().next().value!);
  }

  async get(userId: string, id: string): Promise<StoredResponse | undefined> {
    const entry = this.#byUser.get(userId)?.get(id);
    if (!entry) return undefined;
    if (entry.expires <= this.#now()) {
      this.#byUser.get(userId)!.delete(id);
      return undefined;
    }
    return structuredClone(entry.stored);
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return this.#byUser.get(userId)?.delete(id) ?? false;
  }

  /** Forgets a deleted user's responses. */
  forget(userId: string): void {
    this.#byUser.delete(userId);
  }
}
