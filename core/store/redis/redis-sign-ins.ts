// Sessions and sign-ins under way on Redis, shared by every gateway: one string key each, named by
// the secret's hash and ending with its TTL, so Redis forgets it on time. A sign-in is taken with
// GETDEL: of two answers bearing the same state, one finds it. Sign-ins under way are counted for
// their bounds, in all and per client, by lua/sign-in-begin.lua in sorted sets of their own; the
// record names its client's, so taking it frees its place in both.
import { z } from 'zod';
import {
  secretHash,
  type PendingSignIn,
  type SessionRecord,
  type SignInAdmission,
  type SignInStart,
  type SignInStore,
} from '../sign-ins.ts';
import { keys } from './keys.ts';
import type { RedisClient } from './redis-client.ts';
import { scriptBySha } from './scripts.ts';

const Session = z.object({
  user_id: z.string(),
  issuer: z.string(),
  subject: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
});
const Pending = z.object({ code_verifier: z.string(), nonce: z.string(), return_to: z.string() });
/**
 * As kept: with the hash of its client's address and when it ends on the gateways' clock, as its
 * count's (neither in a record an earlier build wrote).
 */
const Kept = Pending.extend({ client: z.string().optional(), until: z.number().optional() });
const Admission = z.enum(['begun', 'too_many', 'too_many_from_client']);

export class RedisSignIns implements SignInStore {
  readonly #redis: RedisClient;
  readonly #now: () => number;
  // By digest, not defined on the client: the ledger's pipelines would each carry a copy (scripts.ts).
  readonly #begin: ReturnType<typeof scriptBySha>;

  constructor(redis: RedisClient, now: () => number = Date.now) {
    this.#redis = redis;
    this.#now = now;
    this.#begin = scriptBySha(redis, 'sign-in-begin', 2);
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

  async beginSignIn(state: string, pending: PendingSignIn, start: SignInStart): Promise<SignInAdmission> {
    const hash = secretHash(state);
    const client = secretHash(start.client);
    const ttlMs = Math.max(1, Math.ceil(start.ttlMs));
    const now = this.#now();
    const admission = Admission.parse(
      await this.#begin.run(
        keys.signInsUnderWay,
        keys.signInsOfClient(client),
        now,
        now + ttlMs,
        hash,
        start.limits.total,
        start.limits.perClient,
        ttlMs,
      ),
    );
    // Counted first, then kept: a write lost between them holds a place until it would have ended.
    if (admission === 'begun')
      await this.#redis.set(keys.pendingSignIn(hash), JSON.stringify({ ...pending, client, until: now + ttlMs }), 'PX', ttlMs);
    return admission;
  }

  async takeSignIn(state: string): Promise<PendingSignIn | undefined> {
    const hash = secretHash(state);
    const kept = parsed(Kept, await this.#redis.getdel(keys.pendingSignIn(hash)));
    if (!kept) return undefined;
    const { client, until, ...pending } = kept;
    // Its places freed (both keys in one slot, {sign-ins}: one round trip on a cluster too). The
    // sign-in was taken: a failure here only holds its places until it would have ended.
    if (client !== undefined)
      await this.#redis
        .pipeline()
        .zrem(keys.signInsUnderWay, hash)
        .zrem(keys.signInsOfClient(client), hash)
        .exec()
        .catch(() => undefined);
    return until === undefined || until > this.#now() ? pending : undefined;
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
