// Single sign-on's state, shared by every gateway (issue 32): the sessions of people signed in
// through the identity provider, and the sign-ins under way (between the redirect to the provider
// and its answer). Both are found by a random secret the browser holds (the session cookie, the
// `state` of a sign-in); the store keeps only its SHA-256, so what it holds cannot be replayed.
import { createHash } from 'node:crypto';

/** A person signed in through single sign-on. */
export interface SessionRecord {
  readonly user_id: string;
  /** The issuer's name (identity file) and the identity it gave: what the session is of. */
  readonly issuer: string;
  readonly subject: string;
  /** ISO times. */
  readonly created_at: string;
  readonly expires_at: string;
}

/** A sign-in under way: what its answer is checked against. */
export interface PendingSignIn {
  readonly code_verifier: string;
  readonly nonce: string;
  /** Where the browser goes once signed in (a path of this gateway). */
  readonly return_to: string;
}

/** How many sign-ins may be under way at once: in all (across the gateways sharing the store), and from one client. */
export interface SignInLimits {
  readonly total: number;
  readonly perClient: number;
}

/** A sign-in to begin: how long it may take, the client it is begun from (its address, or its IPv6 /64), and the bounds. */
export interface SignInStart {
  readonly ttlMs: number;
  readonly client: string;
  readonly limits: SignInLimits;
}

/** Whether a sign-in was begun, or which bound refused it (it is then not kept). */
export type SignInAdmission = 'begun' | 'too_many' | 'too_many_from_client';

export interface SignInStore {
  /** Keeps a session for `ttlMs`, under the hash of `secret`. */
  createSession(secret: string, session: SessionRecord, ttlMs: number): Promise<void>;
  /** The session of `secret`, while it lasts. */
  session(secret: string): Promise<SessionRecord | undefined>;
  /** Ends the session of `secret` (sign-out); false when there was none. */
  endSession(secret: string): Promise<boolean>;
  /**
   * Keeps a sign-in under way for `start.ttlMs`, under the hash of its state, unless as many as
   * `start.limits` allow are under way already (in all, or from its client). Every sign-in lives
   * the same time, so the ones that ended are dropped oldest first, never by a look at every one.
   */
  beginSignIn(state: string, pending: PendingSignIn, start: SignInStart): Promise<SignInAdmission>;
  /** The sign-in of `state`, taken (its place under the bounds freed): a second answer with the same state finds nothing. */
  takeSignIn(state: string): Promise<PendingSignIn | undefined>;
}

/** How a secret is kept: its SHA-256, hex. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
