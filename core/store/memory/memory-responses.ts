// Stored responses of a single process, per user, for the retention, kept as their JSON (read
// back as a copy, so nothing outside changes what is stored). Each user keeps at most the
// limits' bytes and count, and the whole process at most PROCESS_BYTES: past either the oldest
// go first, so a process never grows without bound.
import { DEFAULT_RESPONSE_LIMITS, readResponse, type ReadResponse, type ResponseLimits, type ResponseStore } from '../responses.ts';

/** What the stored responses of every user together may hold in one process. */
export const PROCESS_BYTES = 256 * 1024 * 1024;

interface Entry {
  readonly userId: string;
  readonly id: string;
  readonly json: string;
  readonly expires: number;
}

interface UserResponses {
  /** By id, oldest first. */
  readonly entries: Map<string, Entry>;
  bytes: number;
}

export class MemoryResponses implements ResponseStore {
  readonly #byUser = new Map<string, UserResponses>();
  /** Every entry, oldest first: what goes when the process holds too much. */
  readonly #all = new Set<Entry>();
  #bytes = 0;
  readonly #retentionMs: number;
  readonly #limits: ResponseLimits;
  readonly #processBytes: number;
  readonly #now: () => number;

  constructor(retentionMs: number, options: { limits?: ResponseLimits; processBytes?: number; now?: () => number } = {}) {
    this.#retentionMs = retentionMs;
    this.#limits = options.limits ?? DEFAULT_RESPONSE_LIMITS;
    this.#processBytes = options.processBytes ?? PROCESS_BYTES;
    this.#now = options.now ?? Date.now;
  }

  async put(userId: string, id: string, json: string): Promise<void> {
    let user = this.#byUser.get(userId);
    if (!user) {
      user = { entries: new Map(), bytes: 0 };
      this.#byUser.set(userId, user);
    }
    const earlier = user.entries.get(id);
    if (earlier) this.#remove(earlier);
    const entry: Entry = { userId, id, json, expires: this.#now() + this.#retentionMs };
    user.entries.set(id, entry);
    user.bytes += json.length;
    this.#all.add(entry);
    this.#bytes += json.length;
    const { bytesPerUser, countPerUser } = this.#limits;
    while (user.entries.size > 1 && (user.bytes > bytesPerUser || user.entries.size > countPerUser))
      this.#remove(user.entries.values().next().value!);
    while (this.#all.size > 1 && this.#bytes > this.#processBytes) this.#remove(this.#all.values().next().value!);
  }

  async get(userId: string, id: string): Promise<ReadResponse | undefined> {
    const entry = this.#byUser.get(userId)?.entries.get(id);
    if (!entry) return undefined;
    if (entry.expires <= this.#now()) {
      this.#remove(entry);
      return undefined;
    }
    return readResponse(entry.json);
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const entry = this.#byUser.get(userId)?.entries.get(id);
    if (!entry) return false;
    this.#remove(entry);
    return true;
  }

  /** Forgets a deleted user's responses. */
  forget(userId: string): void {
    const user = this.#byUser.get(userId);
    if (user) for (const entry of user.entries.values()) this.#remove(entry);
  }

  /** Bytes held now, by every user together (for tests and metrics). */
  get bytes(): number {
    return this.#bytes;
  }

  #remove(entry: Entry): void {
    const user = this.#byUser.get(entry.userId);
    if (!user || user.entries.get(entry.id) !== entry) return;
    user.entries.delete(entry.id);
    user.bytes -= entry.json.length;
    if (user.entries.size === 0) this.#byUser.delete(entry.userId);
    this.#all.delete(entry);
    this.#bytes -= entry.json.length;
  }
}
