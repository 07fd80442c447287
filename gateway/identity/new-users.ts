// How many users tokens and single sign-on may make (security review, finding 20): without a
// bound, a source minting tokens for new identities made 3,000 users in 17 s. Each issuer may make
// at most `perMinute` a minute on a gateway: a bucket of that many, filled again at that pace, so
// a burst (a team's first morning) passes and a flood is cut to one user every 60/perMinute
// seconds, while people already known are never touched. One issuer's flood leaves the others'
// newcomers their own share. Kept per gateway, in memory: N gateways make at most N times as many.
import { errors } from '../api/api-error.ts';

export class NewUsers {
  readonly #perMinute: number;
  readonly #now: () => number;
  /** By issuer name (at most the identity file's issuers): what is left of its minute, as of `at`. */
  readonly #buckets = new Map<string, { readonly left: number; readonly at: number }>();

  constructor(perMinute: number, now: () => number) {
    this.#perMinute = perMinute;
    this.#now = now;
  }

  /** Takes one new user of `issuer`; throws the 429 its caller is answered with when the issuer made its share. */
  take(issuer: string): void {
    const now = this.#now();
    const bucket = this.#buckets.get(issuer);
    const refilled = bucket === undefined ? 0 : (Math.max(0, now - bucket.at) * this.#perMinute) / 60_000;
    const left = Math.min(this.#perMinute, bucket === undefined ? this.#perMinute : bucket.left + refilled);
    if (left < 1) {
      this.#buckets.set(issuer, { left, at: now });
      throw errors.tooManyNewUsers(issuer, this.#perMinute, Math.ceil(((1 - left) * 60) / this.#perMinute));
    }
    this.#buckets.set(issuer, { left: left - 1, at: now });
  }
}
