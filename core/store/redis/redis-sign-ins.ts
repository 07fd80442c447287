// Sessions and sign-ins under way on Redis, shared by every gateway: one string key each, named by
// the secret's hash and ending with its TTL, so Redis forgets it on time. A sign-in is taken with
// GETDEL: of two answers bearing the same state, one finds it.
import { z } from 'zod';
import { secretHash, type PendingSignIn, type SessionRecord, type SignInStore } from '../sign-ins.ts';
import { keys } from './keys.ts';
import type { RedisClient } from './redis-client.ts';

const Session = z.object({
  user_id: z.string(),
  issuer: z.string(),
  subject: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
});
const Pending = z.object({ code_verifier: z.string(), nonce: z.string(), return_to: z.string() });

export class RedisSignIns implements SignInStore {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  async createSession(secret: string, session: SessionRecord, ttlMs: number): Promise<void> {
    await this.#redis.set(keys.session(secretHash(secret)), JSON.stringify(session), 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  async session(secret: string): Promise<SessionRecord | undefined> {
    return parsed(Session, await this.#redis.get(keys.session(secretHash(secret))));
  }

  async endSession(secret: string): Promise<boolean> {
    return (await this.#redis.del(keys.session(secretHash(secret)))) === 1;
  }

  async beginSignIn(state: string, pending: PendingSignIn, ttlMs: number): Promise<void> {
    await this.#redis.set(keys.pendingSignIn(secretHash(state)), JSON.stringify(pending), 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  async takeSignIn(state: string): Promise<PendingSignIn | undefined> {
    return parsed(Pending, await this.#redis.getdel(keys.pendingSignIn(secretHash(state))));
  }
}

/** A stored record read back; one that does not parse (written by another version) is none. */
function parsed<T>(schema: z.ZodType<T>, text: string | null): T | undefined {
  if (text === null) return undefined;
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
