// Single sign-on with OpenID Connect (issue 32), for the Playground and the admin API: the
// authorization code flow with PKCE, done by openid-client. A sign-in begins with a random state,
// nonce and code verifier, kept in the store (shared by every gateway) under the state's hash for
// ten minutes, and the browser bound to it by a cookie; the provider's answer is taken once, its
// state, nonce, code and ID token checked by openid-client; the person is then the user their
// identity is (identity-accounts.ts) and gets a session: a random secret in an HttpOnly cookie,
// kept in the store under its hash until it expires or they sign out. Every gateway reads the same
// sessions, so a person signed in through one is signed in on all. Sign-ins under way are bounded
// in all and per client address (identity file), and a store that does not answer gives the
// sign-in page with 503 as any other failure does.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import * as oidc from 'openid-client';
import type { ApiKeyRecord, UserRecord } from '../../core/store/accounts.ts';
import type { PendingSignIn, SessionRecord, SignInAdmission, SignInStore } from '../../core/store/sign-ins.ts';
import { StoreUnavailableError } from '../../core/store/store-errors.ts';
import type { Caller } from '../accounts/caller.ts';
import { ApiError } from '../api/api-error.ts';
import type { IdentityAccounts } from './identity-accounts.ts';
import type { IssuerConfig, SignInConfig } from './identity-config.ts';
import { returnPath, signInClient } from './sign-in-start.ts';
import { identityOf } from './token-identity.ts';

/** How long a sign-in may take, from the redirect to the provider to its answer. */
export const SIGN_IN_TTL_MS = 10 * 60_000;
/** A discovery or token request to the provider is given up after this long. */
const PROVIDER_TIMEOUT_SECONDS = 10;

export interface SignInOptions {
  readonly config: SignInConfig;
  readonly issuer: IssuerConfig;
  readonly clientSecret: string | undefined;
  readonly store: SignInStore;
  readonly accounts: IdentityAccounts;
  readonly now: () => number;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  /** Told how each sign-in that came back from the provider ended (a metric's label). */
  readonly onOutcome?: ((outcome: 'signed_in' | 'refused' | 'failed') => void) | undefined;
}

/** A sign-in that cannot complete: what the person is shown, and the status of the page. */
export class SignInFailure extends Error {
  override name = 'SignInFailure';
  readonly status: number;
  /** The person was refused (their identity or groups give no user), rather than the sign-in failing. */
  readonly refused: boolean;
  constructor(status: number, message: string, refused = false) {
    super(message);
    this.status = status;
    this.refused = refused;
  }
}

export class SignIn {
  readonly #options: SignInOptions;
  #configuration: Promise<oidc.Configuration> | undefined;

  constructor(options: SignInOptions) {
    this.#options = options;
  }

  /** The issuer's name, as the Playground offers it. */
  get issuerName(): string {
    return this.#options.issuer.name;
  }

  get keySignIn(): boolean {
    return this.#options.config.key_sign_in;
  }

  get cookieSecure(): boolean {
    return this.#options.config.cookie_secure;
  }

  /**
   * Where to send the browser at `address` to sign in, and the state its cookie must carry back;
   * `returnTo` is where it asked to return (a path of this gateway, else the Playground).
   */
  async begin(returnTo: string | undefined, address: string): Promise<{ readonly url: URL; readonly state: string }> {
    const configuration = await this.#discovered();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const { config } = this.#options;
    const pending = { code_verifier: codeVerifier, nonce, return_to: returnPath(returnTo, new URL(config.redirect_url).origin) };
    const admission = await this.#begun(state, pending, signInClient(address));
    if (admission === 'too_many')
      throw new SignInFailure(429, 'Too many sign-ins are under way on this gateway. Try again in a few minutes.');
    if (admission === 'too_many_from_client')
      throw new SignInFailure(429, 'Too many sign-ins have been started from your address without finishing. Try again in a few minutes.');
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.#options.config.redirect_url,
      scope: this.#options.config.scopes.join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, state };
  }

  /**
   * The provider's answer (the query of the callback), from the browser holding `stateCookie`:
   * checked, and the person's session made. Throws SignInFailure with what to show otherwise.
   */
  async finish(
    query: URLSearchParams,
    stateCookie: string | undefined,
  ): Promise<{ readonly secret: string; readonly returnTo: string; readonly maxAgeSeconds: number }> {
    try {
      const session = await this.#finish(query, stateCookie);
      this.#options.onOutcome?.('signed_in');
      return session;
    } catch (error) {
      this.#options.onOutcome?.(error instanceof SignInFailure && error.refused ? 'refused' : 'failed');
      throw error instanceof StoreUnavailableError ? this.#storeDown(error) : error;
    }
  }

  async #finish(
    query: URLSearchParams,
    stateCookie: string | undefined,
  ): Promise<{ readonly secret: string; readonly returnTo: string; readonly maxAgeSeconds: number }> {
    const error = query.get('error');
    if (error !== null) {
      // Its text is the provider's, or anyone's who sent the browser here: logged, never shown.
      this.#options.log.warn(
        { provider_error: error.slice(0, 200), provider_error_description: query.get('error_description')?.slice(0, 1000) },
        'single sign-on: the identity provider did not sign the person in',
      );
      throw new SignInFailure(401, 'The identity provider did not sign you in. Start again, or ask your administrator.');
    }
    const state = query.get('state');
    if (state === null || stateCookie === undefined || state !== stateCookie)
      throw new SignInFailure(400, 'This sign-in was not started in this browser, or was already used. Start again.');
    const pending = await this.#options.store.takeSignIn(state);
    if (!pending) throw new SignInFailure(400, 'This sign-in has expired or was already used. Start again.');
    const configuration = await this.#discovered();
    const callback = new URL(this.#options.config.redirect_url);
    callback.search = query.toString();
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims()!;
      // Profile and groups claims are often only in the user info (an ID token may carry `sub` alone).
      const info = configuration.serverMetadata().userinfo_endpoint
        ? await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)
        : {};
      claims = { ...info, ...idClaims };
    } catch (failure) {
      this.#options.log.warn(`single sign-on: the identity provider's answer was refused: ${(failure as Error).message}`);
      throw new SignInFailure(401, 'The identity provider’s answer could not be checked. Start again.');
    }
    const identity = identityOf(this.#options.issuer, claims);
    if ('problem' in identity) throw new SignInFailure(401, `You could not be signed in: ${identity.problem}.`, true);
    let user: UserRecord;
    try {
      user = await this.#options.accounts.userFor(identity);
    } catch (refusal) {
      if (refusal instanceof ApiError) throw new SignInFailure(refusal.status, refusal.message, true);
      throw refusal;
    }
    const secret = randomBytes(32).toString('base64url');
    const now = this.#options.now();
    const lifetimeMs = this.#options.config.session_hours * 3_600_000;
    const session: SessionRecord = {
      user_id: user.id,
      issuer: this.#options.issuer.name,
      subject: identity.subject,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + lifetimeMs).toISOString(),
    };
    await this.#options.store.createSession(secret, session, lifetimeMs);
    this.#options.log.info(`user "${user.id}" signed in with ${this.#options.issuer.name}`);
    return { secret, returnTo: pending.return_to, maxAgeSeconds: Math.floor(lifetimeMs / 1000) };
  }

  /** The caller a session cookie stands for; undefined when the session ended or its user is gone. */
  async callerFor(secret: string): Promise<Caller | undefined> {
    const session = await this.#options.store.session(secret);
    if (!session) return undefined;
    const user = await this.#options.accounts.user(session.user_id);
    if (!user) return undefined;
    return await this.#options.accounts.callerOf(user, sessionKey(session, user));
  }

  /** Ends the session of `secret` (sign-out). */
  async end(secret: string): Promise<void> {
    await this.#options.store.endSession(secret);
  }

  /** Keeps the sign-in under way, within its bounds; a store that does not answer is a failure with a page. */
  async #begun(state: string, pending: PendingSignIn, client: string): Promise<SignInAdmission> {
    const { config, store } = this.#options;
    const limits = { total: config.max_pending_sign_ins, perClient: config.max_pending_sign_ins_per_client };
    try {
      return await store.beginSignIn(state, pending, { ttlMs: SIGN_IN_TTL_MS, client, limits });
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw this.#storeDown(error);
      throw error;
    }
  }

  #storeDown(error: StoreUnavailableError): SignInFailure {
    this.#options.log.warn(`single sign-on: ${error.message}`);
    return new SignInFailure(503, 'Signing in is unavailable for a moment. Try again shortly.');
  }

  /** The provider's configuration, discovered once; a discovery that fails is tried again at the next sign-in. */
  #discovered(): Promise<oidc.Configuration> {
    this.#configuration ??= this.#discover().catch((error: unknown) => {
      this.#configuration = undefined;
      this.#options.log.warn(`single sign-on: ${this.#options.issuer.issuer} could not be discovered: ${(error as Error).message}`);
      throw new SignInFailure(503, 'The identity provider cannot be reached right now. Try again shortly.');
    });
    return this.#configuration;
  }

  async #discover(): Promise<oidc.Configuration> {
    const { issuer, clientSecret, config } = this.#options;
    const server = new URL(issuer.issuer);
    const configuration = await oidc.discovery(
      server,
      config.client_id,
      undefined,
      clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(clientSecret),
      {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        // A provider on plain HTTP only on this machine (development, tests); anywhere else HTTPS.
        execute: server.protocol === 'http:' && LOOPBACK.has(server.hostname) ? [oidc.allowInsecureRequests] : [],
      },
    );
    configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
    return configuration;
  }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The caller's "key": its session, for usage records (`key_id` `sso-<issuer>`); no budget of its own. */
function sessionKey(session: SessionRecord, user: UserRecord): ApiKeyRecord {
  return {
    id: `sso-${session.issuer}`,
    user_id: user.id,
    name: `single sign-on with ${session.issuer}`,
    hash: '',
    hint: '',
    created_at: session.created_at,
    expires_at: session.expires_at,
    revoked_at: null,
  };
}
