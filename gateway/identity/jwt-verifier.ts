// Bearer JWTs of configured issuers (issue 32): a token is believed only when its issuer is one
// configured, its signature verifies with one of that issuer's keys (jwks-cache.ts) under an
// allowed algorithm, it is meant for us (`aud`), and it is valid now (`exp`, which it must carry,
// and `nbf`, with a small leeway). The verification itself is jose's; this file chooses the
// issuer, fetches keys again once when a token names a key not held (a rotation), and says why a
// token was refused.
//
// Refused by construction: `alg: none` (jose verifies no unsecured token), and a token signed
// with HS256 using the issuer's public key as the secret (only the issuer's asymmetric
// algorithms are allowed, and its keys are public keys).
import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Log } from '../../core/log.ts';
import { JwksCache, JwksUnavailableError, type JwksLoader } from './jwks-cache.ts';

/** Asymmetric algorithms only: a symmetric one would take a public key as a shared secret. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

export interface JwtIssuer {
  /** The `iss` its tokens carry, exactly. */
  readonly issuer: string;
  /** Where its keys are read from (jwks-sources.ts), and how messages name that place. */
  readonly keys: { readonly source: string; readonly load: JwksLoader };
  /** What `aud` must hold (one of them). */
  readonly audiences: readonly string[];
  readonly algorithms: readonly JwtAlgorithm[];
  /** Leeway on `exp` and `nbf` (seconds). */
  readonly clockToleranceSeconds: number;
}

export interface JwtVerifierOptions {
  /** A fetch of an issuer's keys is aborted after this long (ms). */
  readonly jwksTimeoutMs: number;
  /** At most one fetch for an unknown key per issuer per this long (ms). */
  readonly jwksMinRefreshMs: number;
  /** Keys older than this are refreshed in the background (ms). */
  readonly jwksMaxAgeMs: number;
  readonly now: () => number;
  /** Told of each failed fetch of an issuer's keys, and why. */
  readonly log: Pick<Log, 'warn'>;
}

/** Why a token was refused: what a 401 (or a 503, `keys_unavailable`) says. */
export type JwtRefusal =
  | 'malformed'
  | 'unknown_issuer'
  | 'bad_signature'
  | 'algorithm_not_allowed'
  | 'unknown_key'
  | 'expired'
  | 'no_expiry'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'keys_unavailable';

export type JwtVerdict =
  | { readonly ok: true; readonly issuer: JwtIssuer; readonly claims: JWTPayload }
  | { readonly ok: false; readonly refusal: JwtRefusal };

export class JwtVerifier {
  readonly #issuers = new Map<string, { readonly issuer: JwtIssuer; readonly keys: JwksCache }>();
  readonly #now: () => number;

  constructor(issuers: readonly JwtIssuer[], options: JwtVerifierOptions) {
    this.#now = options.now;
    for (const issuer of issuers) {
      const keys = new JwksCache({
        source: issuer.keys.source,
        load: issuer.keys.load,
        timeoutMs: options.jwksTimeoutMs,
        minRefreshMs: options.jwksMinRefreshMs,
        maxAgeMs: options.jwksMaxAgeMs,
        now: options.now,
        log: options.log,
      });
      this.#issuers.set(issuer.issuer, { issuer, keys });
    }
  }

  async verify(token: string): Promise<JwtVerdict> {
    let claimed: JWTPayload;
    try {
      claimed = decodeJwt(token);
    } catch {
      return { ok: false, refusal: 'malformed' };
    }
    const known = typeof claimed.iss === 'string' ? this.#issuers.get(claimed.iss) : undefined;
    if (!known) return { ok: false, refusal: 'unknown_issuer' };
    const { issuer, keys } = known;
    try {
      const first = await this.#verifyWith(token, issuer, keys);
      if (first !== 'unknown_key') return first;
      // A key not held: the issuer may have rotated its keys. Fetch once (at a bounded rate) and try again.
      if (!(await keys.refreshForUnknownKey())) return { ok: false, refusal: 'unknown_key' };
      const second = await this.#verifyWith(token, issuer, keys);
      return second === 'unknown_key' ? { ok: false, refusal: 'unknown_key' } : second;
    } catch (error) {
      if (error instanceof JwksUnavailableError) return { ok: false, refusal: 'keys_unavailable' };
      throw error;
    }
  }

  async #verifyWith(token: string, issuer: JwtIssuer, keys: JwksCache): Promise<JwtVerdict | 'unknown_key'> {
    const set = await keys.keys();
    try {
      const { payload } = await jwtVerify(token, set, {
        issuer: issuer.issuer,
        audience: [...issuer.audiences],
        algorithms: [...issuer.algorithms],
        clockTolerance: issuer.clockToleranceSeconds,
        currentDate: new Date(this.#now()),
        // A token without `exp` would be good for ever, and its caller kept for the longest while.
        requiredClaims: ['exp'],
      });
      return { ok: true, issuer, claims: payload };
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) return 'unknown_key';
      return { ok: false, refusal: refusalOf(error) };
    }
  }
}

function refusalOf(error: unknown): JwtRefusal {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf' || error.claim === 'iat') return 'not_yet_valid';
    if (error.claim === 'aud') return 'wrong_audience';
    if (error.claim === 'iss') return 'unknown_issuer';
    if (error.claim === 'exp' && error.reason === 'missing') return 'no_expiry';
    return 'malformed';
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return 'algorithm_not_allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'bad_signature';
  return 'malformed';
}
