// An issuer's signing keys (its JWKS), fetched and kept for verifying bearer JWTs
// (jwt-verifier.ts). What it promises, as the callers on the request path need it:
// - the keys last fetched keep working while the JWKS endpoint is down or hangs: a refresh that
//   fails leaves them in place, and a stale set is refreshed in the background, never awaited;
// - a token signed with a key not in the set (the issuer rotated its keys) makes one fetch at once,
//   but no more than one every `minRefreshMs` for the issuer, so tokens with made-up key ids cannot
//   make the gateway hammer the issuer (the first is at once: a rotation is seen on its first token);
// - no fetch outlasts `timeoutMs` (aborted), so no request waits on the issuer longer than that.
import { z } from 'zod';
import type { JSONWebKeySet } from 'jose';

/** Reads an issuer's JWKS document (jwks-sources.ts); rejects when it cannot, and stops when `signal` aborts. */
export type JwksLoader = (signal: AbortSignal) => Promise<unknown>;

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
}

/** The JWKS endpoint could not be read and no keys were ever read from it. */
export class JwksUnavailableError extends Error {
  override name = 'JwksUnavailableError';
}

/** A JWKS as served: only its shape is checked here; each key is checked by jose when used. */
const JwksDocument = z.object({ keys: z.array(z.record(z.string(), z.unknown())).max(100) });

export class JwksCache {
  readonly #options: JwksCacheOptions;
  #keys: JSONWebKeySet | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  /** When a fetch for an unknown key was last started, whatever came of it. */
  #unknownTriedAt = Number.NEGATIVE_INFINITY;
  #fetching: Promise<void> | undefined;

  constructor(options: JwksCacheOptions) {
    this.#options = options;
  }

  /** The keys: fetched first if none were ever read (throws JwksUnavailableError if that fails). */
  async keys(): Promise<JSONWebKeySet> {
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
   * started less than `minRefreshMs` ago. Resolves with whether the keys may have changed.
   */
  async refreshForUnknownKey(): Promise<boolean> {
    if (this.#fetching !== undefined) {
      await this.#fetching; // one under way already: its keys are the newest there will be
      return true;
    }
    const now = this.#options.now();
    if (now - this.#unknownTriedAt < this.#options.minRefreshMs) return false;
    this.#unknownTriedAt = now;
    await this.#fetch();
    return true;
  }

  /** One fetch at a time; its failure leaves the keys held as they were. */
  #fetch(): Promise<void> {
    this.#fetching ??= this.#load().finally(() => {
      this.#fetching = undefined;
    });
    return this.#fetching;
  }

  async #load(): Promise<void> {
    try {
      const parsed = JwksDocument.safeParse(await this.#options.load(AbortSignal.timeout(this.#options.timeoutMs)));
      if (!parsed.success) return;
      this.#keys = parsed.data as JSONWebKeySet;
      this.#fetchedAt = this.#options.now();
    } catch {
      // Down, hanging (aborted), refused or not JSON: the keys held stay.
    }
  }
}
