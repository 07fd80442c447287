// The caller a bearer JWT stands for (issue 32): the token verified (jwt-verifier.ts), its
// identity read (token-identity.ts), and the user it is (identity-accounts.ts: found or made, in
// the team and role its groups give). What comes out is a Caller like an API key's, so budgets,
// limits, priorities and allowed routers apply to it exactly as to a key's; its "key" is the
// token's issuer (`jwt-<issuer name>`), which carries no budget of its own.
//
// A caller is kept for its token until the token expires, at most `freshMs`, and forgotten at once
// when its user or team changes anywhere (the store's change notices), as API keys are
// (accounts/key-cache.ts): most requests verify nothing and read nothing.
import type { AccountStore, ApiKeyRecord, UserRecord } from '../../core/store/accounts.ts';
import { forgetCallers, type Caller } from '../accounts/caller.ts';
import { ApiError, errors } from '../api/api-error.ts';
import type { IdentityAccounts } from './identity-accounts.ts';
import type { IdentityConfig } from './identity-config.ts';
import type { JwtRefusal, JwtVerifier } from './jwt-verifier.ts';
import { identityOf, type TokenIdentity } from './token-identity.ts';

export interface TokenCallersOptions {
  readonly verifier: JwtVerifier;
  readonly config: IdentityConfig;
  readonly accounts: IdentityAccounts;
  /** Whose change notices make a caller be looked up again. */
  readonly store: Pick<AccountStore, 'onAccountChange'>;
  readonly now: () => number;
  /** Told why each refused token was refused (a metric's label). */
  readonly onRefusal?: ((reason: string) => void) | undefined;
  /** Longest a caller is kept for its token (ms). */
  readonly freshMs?: number;
  readonly maxEntries?: number;
}

/** What a refused token is told, by why it was refused; `keys_unavailable` is a 503 instead. */
const REFUSALS: Record<Exclude<JwtRefusal, 'keys_unavailable'>, string> = {
  malformed: 'it is not a valid JWT',
  unknown_issuer: 'its issuer (iss) is not one this gateway trusts',
  bad_signature: 'its signature does not verify',
  algorithm_not_allowed: 'it is signed with an algorithm this gateway does not accept',
  unknown_key: 'it is signed with a key its issuer does not publish',
  expired: 'it has expired',
  no_expiry: 'it has no expiry (exp), which this gateway requires',
  not_yet_valid: 'it is not valid yet',
  wrong_audience: 'it is not meant for this gateway (aud)',
};

/** Why a verified token's identity got no user, by the error's code (else `no_user`: no user lists it). */
const USER_REFUSALS: Partial<Record<ApiError['code'], string>> = { forbidden: 'unmapped', rate_limit_exceeded: 'too_many_new_users' };

export class TokenCallers {
  readonly #options: TokenCallersOptions;
  readonly #entries = new Map<string, { readonly caller: Caller; readonly until: number }>();
  readonly #freshMs: number;
  readonly #maxEntries: number;
  readonly #unsubscribe: () => void;

  constructor(options: TokenCallersOptions) {
    this.#options = options;
    this.#freshMs = options.freshMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#unsubscribe = options.store.onAccountChange((subject) => forgetCallers(this.#entries, subject, (entry) => entry.caller));
  }

  /** The caller `token` stands for; throws the ApiError a caller is answered with when it stands for none. */
  async callerFor(token: string): Promise<Caller> {
    const now = this.#options.now();
    const entry = this.#entries.get(token);
    if (entry && now < entry.until) return entry.caller;
    this.#entries.delete(token);
    const verdict = await this.#options.verifier.verify(token);
    if (!verdict.ok) {
      this.#options.onRefusal?.(verdict.refusal);
      throw verdict.refusal === 'keys_unavailable' ? errors.identityUnavailable() : errors.invalidToken(REFUSALS[verdict.refusal]);
    }
    const issuer = this.#options.config.issuers.find((candidate) => candidate.issuer === verdict.issuer.issuer)!;
    const identity = identityOf(issuer, verdict.claims);
    if ('problem' in identity) {
      this.#options.onRefusal?.(identity.refusal ?? 'no_identity');
      throw errors.invalidToken(identity.problem);
    }
    let caller: Caller;
    try {
      caller = await this.#callerOf(identity);
    } catch (error) {
      if (error instanceof ApiError) this.#options.onRefusal?.(USER_REFUSALS[error.code] ?? 'no_user');
      throw error;
    }
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(token, { caller, until: Math.min(identity.expiresAt ?? Number.POSITIVE_INFINITY, now + this.#freshMs) });
    return caller;
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }

  async #callerOf(identity: TokenIdentity): Promise<Caller> {
    const user = await this.#options.accounts.userFor(identity);
    return await this.#options.accounts.callerOf(user, tokenKey(identity, user));
  }
}

/**
 * The caller's "key": how it authenticated, for usage records (`key_id` `jwt-<issuer>`); no
 * budget, limits or routers of its own, and valid as long as the token.
 */
function tokenKey(identity: TokenIdentity, user: UserRecord): ApiKeyRecord {
  return {
    id: `jwt-${identity.issuer.name}`,
    user_id: user.id,
    name: `token of ${identity.issuer.name}`,
    hash: '',
    hint: '',
    created_at: user.created_at,
    expires_at: identity.expiresAt === undefined ? null : new Date(identity.expiresAt).toISOString(),
    revoked_at: null,
  };
}
