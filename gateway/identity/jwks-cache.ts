// An issuer's signing keys (its JWKS), fetched and kept for verifying bearer JWTs
// (jwt-verifier.ts). What it promises, as the callers on the request path need it:
// - the keys are parsed once per fetch into one key set, which every verification uses until the
//   next fetch (jose's local JWKS, which also keeps each key imported): a token costs no copy of
//   the JWKS, however large it was allowed to be;
// - the keys last fetched keep working while the JWKS endpoint is down or hangs: a refresh that
//   fails leaves them in place, and a stale set is refreshed in the background, never awaited;
// - a token signed with a key not in the set (the issuer rotated its keys) makes one fetch at once,
//   but no more than one every `minRefreshMs` for the issuer, so tokens with made-up key ids cannot
//   make the gateway hammer the issuer (the first is at once: a rotation is seen on its first token);
// - no fetch outlasts `timeoutMs` (aborted), so no request waits on the issuer longer than that;
// - a JWKS past MAX_JWKS_BYTES or listing more than MAX_JWKS_KEYS keys is refused at its fetch, and
//   a refusal counts as any failed fetch: it is logged, and no fetch starts again before a backoff
//   (1 s doubling to a minute, reset by a fetch that succeeds), whatever tokens arrive meanwhile,
//   forged ones included. Tokens of an issuer whose keys were never read are refused at once then.
import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { z } from 'zod';
import { backoffDelay, type BackoffPolicy } from '../../core/kubernetes/backoff.ts';
import type { Log } from '../../core/log.ts';

/**
 * Reads an issuer's JWKS document (jwks-sources.ts), refusing a body past `maxBytes` without
 * reading the rest; rejects when it cannot, and stops when `signal` aborts.
 */
export type JwksLoader = (signal: AbortSignal, maxBytes: number) => Promise<unknown>;

/** The keys of one fetch, parsed once: what jose's jwtVerify takes to find a token's key by its kid and alg. */
export type KeySet = ReturnType<typeof createLocalJWKSet>;

/** A JWKS body larger than this is refused: the largest public ones (with certificate chains) are some tens of kB. */
export const MAX_JWKS_BYTES = 1024 * 1024;
/** A JWKS listing more keys than this is refused: an issuer publishes a handful (current, next, previous). */
export const MAX_JWKS_KEYS = 100;
/** How long after a failed fetch the next may start: doubling with each failure in a row. */
export const JWKS_BACKOFF: BackoffPolicy = { baseMs: 1000, maxMs: 60_000 };

export interface JwksCacheOptions {
  /** Where the keys come from, as error messages name it (a URL, or the Kubernetes API). */
  readonly source: string;
  readonly load: JwksLoader;
  /** A fetch is aborted after this long (ms). */
  readonly timeoutMs: number;
  /** At most one fetch for an unknown key per this long (ms). */
  readonly minRefreshMs: number;
  /** Keys older than this are refreshed in the background on their next use (ms). */
  readonly maxAgeMs: number;
  readonly now: () => number;
  /** Told of each failed fetch, in one line saying why. */
  readonly log: Pick<Log, 'warn'>;
}

/** The JWKS endpoint could not be read and no keys were ever read from it. */
export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError';
}

/** A JWKS as served: only its shape is checked here; each key is checked by jose when used. */
const JwksDocument = z.object({ keys: z.array(z.record(z.string(), z.unknown())) });

export class JwksCache {
  readonly #options: JwksCacheOptions;
  #keys: KeySet | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  /** When a fetch for an unknown key was last started, whatever came of it. */
  #unknownTriedAt = Number.NEGATIVE_INFINITY;
  #fetching: Promise<void> | undefined;
  /** Fetches failed in a row, and before when no fetch starts again. */
  #failures = 0;
  #retryAt = Number.NEGATIVE_INFINITY;

  constructor(options: JwksCacheOptions) {
    this.#options = options;
  }

  /** The keys: fetched first if none were ever read (throws JwksUnavailableError if that fails, or waits for its backoff). */
  async keys(): Promise<KeySet> {
    if (this.#keys === undefined) {
      await this.#fetch();
      if (this.#keys === undefined) throw new JwksUnavailableError(`the issuer's keys could not be read from ${this.#options.source}`);
    } else if (this.#options.now() - this.#fetchedAt > this.#options.maxAgeMs) {
      void this.#fetch(); // in the background: the keys held serve meanwhile
    }
    return this.#keys;
  }

  /**
   * A token named a key the set does not hold: fetches again, unless a fetch for an unknown key was
   * started less than `minRefreshMs` ago or a failed fetch's backoff has not passed. Resolves with
   * whether the keys may have changed.
   */
  async refreshForUnknownKey(): Promise<boolean> {
    if (this.#fetching !== undefined) {
      await this.#fetching; // one under way already: its keys are the newest there will be
      return true;
    }
    const now = this.#options.now();
    if (now - this.#unknownTriedAt < this.#options.minRefreshMs || now < this.#retryAt) return false;
    this.#unknownTriedAt = now;
    await this.#fetch();
    return true;
  }

  /** One fetch at a time, and none before the backoff of a failed one has passed; a failure leaves the keys held as they were. */
  #fetch(): Promise<void> {
    if (this.#fetching === undefined && this.#options.now() >= this.#retryAt) {
      this.#fetching = this.#load().finally(() => {
        this.#fetching = undefined;
      });
    }
    return this.#fetching ?? Promise.resolve();
  }

  async #load(): Promise<void> {
    try {
      const document = await this.#options.load(AbortSignal.timeout(this.#options.timeoutMs), MAX_JWKS_BYTES);
      this.#keys = keySetOf(document);
      this.#fetchedAt = this.#options.now();
      this.#failures = 0;
      this.#retryAt = Number.NEGATIVE_INFINITY;
    } catch (error) {
      // Down, hanging (aborted), refused, too large, or not a JWKS: the keys held stay.
      this.#failures++;
      const delayMs = backoffDelay(this.#failures, JWKS_BACKOFF);
      this.#retryAt = this.#options.now() + delayMs;
      const meanwhile = this.#keys === undefined ? 'its tokens are refused (503)' : 'the keys read before serve';
      this.#options.log.warn(
        { source: this.#options.source, failures: this.#failures },
        `An issuer's keys could not be read from ${this.#options.source}: ${reasonOf(error)}; ${meanwhile}, and they are read again in ${delayMs / 1000} s at the earliest`,
      );
    }
  }
}

/** The key set of a fetched JWKS document; throws saying why it is refused. */
function keySetOf(document: unknown): KeySet {
  // Counted before the shape is checked: a list of too many keys is not walked.
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (Array.isArray(keys) && keys.length > MAX_JWKS_KEYS) throw new Error(`it lists ${keys.length} keys, more than ${MAX_JWKS_KEYS}`);
  const parsed = JwksDocument.safeParse(document);
  if (!parsed.success) throw new Error('it is not a JWKS (a JSON object with a list of keys)');
  return createLocalJWKSet(parsed.data as JSONWebKeySet);
}

/** Why a fetch failed, in a few words: fetch's own "fetch failed" says nothing without its cause. */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${(error.cause as NodeJS.ErrnoException).code ?? error.cause.message}` : '';
  return `${error.message}${cause}`;
}
