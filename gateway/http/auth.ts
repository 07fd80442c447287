// Authentication (spec 5): `Authorization: Bearer <key>`, or `x-api-key: <key>` as Anthropic's
// clients send it. Who may call a route is decided on the route the request MATCHED, never on its raw URL (which can spell the same route differently:
// `/%761/models`, `/v%31/models`, `http://host/v1/models`). Each route declares its access in its
// config; a route that declares none needs a key, so a new route cannot be left open by mistake,
// and so does a URL that matches no route (its 404 says nothing to a caller without a key).
// The caller's user and key are looked up once per request and hung on the request.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountStore } from '../../core/store/accounts.ts';
import { hashKey } from '../../core/accounts/api-keys.ts';
import type { Caller } from '../accounts/caller.ts';
import type { SignIn } from '../identity/sign-in.ts';
import type { TokenCallers } from '../identity/token-callers.ts';
import { cookieOf, SESSION_COOKIE } from './session-cookie.ts';
import { errors, type ApiError } from '../api/api-error.ts';

/**
 * Who may call a route: anyone (`public`), any valid key (`key`, what a route that declares
 * nothing gets), an admin's or a team admin's key (`manager`: the route scopes a team admin to
 * their team, team-scope.ts) or an admin's key (`admin`).
 */
export type Access = 'public' | 'key' | 'manager' | 'admin';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined;
    /** How the caller authenticated: an API key, a bearer JWT or a single sign-on session. */
    credential: Credential | undefined;
    /** performance.now() when authentication began and ended: kept only for a traced gateway (the request's trace starts at the first). */
    authTiming: readonly [number, number] | undefined;
  }
  interface FastifyContextConfig {
    access?: Access;
    /** The route's error envelope, when not OpenAI's (pipeline/api-surfaces.ts). */
    errorBody?: ((error: ApiError) => object) | undefined;
    /** The route reads a multipart form (multipart-body.ts): transcriptions. */
    multipart?: boolean;
  }
}

/** Route config of a route anyone may call. */
export const PUBLIC = { access: 'public' } as const satisfies { access: Access };

/** Where keys are looked up: the store itself, or a cache in front of it. */
export type KeyLookup = Pick<AccountStore, 'findKey'>;

/**
 * How callers are found: by API key, by bearer JWT when identity by token is configured, and by
 * the session cookie of single sign-on when that is (gateway/identity/).
 */
export interface CallerLookup {
  readonly keys: KeyLookup;
  readonly tokens?: Pick<TokenCallers, 'callerFor'> | undefined;
  readonly sessions?: Pick<SignIn, 'callerFor' | 'keySignIn'> | undefined;
}

/** How the caller authenticated: an API key, a bearer JWT, or a single sign-on session. */
export type Credential = 'key' | 'token' | 'session';

/**
 * Requires, on every route, the access the matched route declares (a key when it declares none).
 * `timed`: each authentication's start and end are kept (request.authTiming), for traces.
 */
export function registerAuth(app: FastifyInstance, accounts: CallerLookup, now: () => number, timed = false): void {
  app.decorateRequest('caller', undefined);
  app.decorateRequest('credential', undefined);
  app.decorateRequest('authTiming', undefined);
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access ?? 'key';
    if (access === 'public') return;
    const startedAt = timed ? performance.now() : 0;
    const credential = await authenticate(request, accounts, now());
    request.credential = credential;
    if (timed) request.authTiming = [startedAt, performance.now()];
    if (access === 'admin') requireAdmin(request);
    else if (access === 'manager') requireManager(request);
    // With key sign-in off, managing the gateway takes single sign-on (or a token of an issuer).
    if (access !== 'key' && credential === 'key' && accounts.sessions?.keySignIn === false) throw errors.forbidden(SSO_ONLY);
  });
}

/** Makes every route registered on `instance` open to admins and team admins, each route scoping the latter (team-scope.ts). */
export function managersOnly(instance: FastifyInstance): void {
  instance.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: route.config?.access ?? 'manager' };
  });
}

/** Makes every route registered on `instance` (a plugin's scope) admin-only. */
export function adminOnly(instance: FastifyInstance): void {
  instance.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: 'admin' };
  });
}

const SSO_ONLY =
  "This gateway's admin API takes single sign-on only: sign in through the Playground, or send a token of a configured issuer";

/** Finds the caller (request.caller) and says how they authenticated. */
async function authenticate(request: FastifyRequest, accounts: CallerLookup, now: number): Promise<Credential> {
  const presented = presentedKey(request);
  if (presented === undefined) {
    request.caller = await sessionCaller(request, accounts);
    return 'session';
  }
  if (accounts.tokens !== undefined && isJwt(presented)) {
    request.caller = await accounts.tokens.callerFor(presented);
    return 'token';
  }
  const found = await accounts.keys.findKey(hashOf(presented));
  if (!found) throw errors.invalidKey();
  if (found.key.revoked_at !== null) throw errors.revokedKey();
  if (found.key.expires_at !== null && Date.parse(found.key.expires_at) <= now) throw errors.expiredKey();
  request.caller = found;
  return 'key';
}

/**
 * The caller of a request that presents no key: its single sign-on session, if single sign-on is
 * on and it sends the session cookie. A cookie is sent by the browser whoever made the page, so a
 * request that changes something must come from a page of this gateway: its Origin must be the
 * gateway's (what a browser sends with every such request), else it is refused.
 */
async function sessionCaller(request: FastifyRequest, accounts: CallerLookup): Promise<Caller> {
  const secret = accounts.sessions === undefined ? undefined : cookieOf(request, SESSION_COOKIE);
  if (secret === undefined) throw errors.missingKey();
  if (!SAFE_METHODS.has(request.method) && !sameOrigin(request)) throw errors.forbidden(CROSS_ORIGIN);
  const caller = await accounts.sessions!.callerFor(secret);
  if (!caller) throw errors.sessionEnded();
  return caller;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const CROSS_ORIGIN = 'A signed-in request that changes something must come from the gateway’s own pages (its Origin header)';

function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined || request.headers.host === undefined) return false;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/**
 * The key (or token) a request presents: `Authorization: Bearer <key>`, as OpenAI's clients send
 * it, or `x-api-key: <key>`, as Anthropic's do; undefined when it presents neither.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    // As nearly every client writes it; anything else is read by the pattern.
    if (header.startsWith('Bearer ') && isPlainKey(header, 7)) return header.slice(7);
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw errors.missingKey();
    return match[1]!;
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.trim();
  return undefined;
}

/**
 * A JWT rather than an API key: three base64url parts, the first a JSON object (`eyJ` is `{"`).
 * API keys start with `tg-`, so the two never meet.
 */
function isJwt(presented: string): boolean {
  const first = presented.indexOf('.');
  return presented.startsWith('eyJ') && first > 0 && presented.indexOf('.', first + 1) > first + 1;
}

/** `text` from `from` on is one run of visible ASCII, no space: a key as the pattern `\\S+` would take it. */
function isPlainKey(text: string, from: number): boolean {
  if (text.length === from) return false;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code >= 0x7f) return false;
  }
  return true;
}

/**
 * The hashes of the keys presented lately. SHA-256 through node:crypto is a native call of about
 * 2 µs a request with its crossing (profiled 2026-11-27), for the same few keys again and again.
 * Bounded: past HASHES_KEPT different keys the memo starts again, so a caller trying many keys
 * costs no memory. The memo holds keys as they were presented (so does the request, while it
 * lives); nothing reads it but hashOf.
 */
const hashes = new Map<string, string>();
const HASHES_KEPT = 4096;

function hashOf(key: string): string {
  let hash = hashes.get(key);
  if (hash === undefined) {
    if (hashes.size >= HASHES_KEPT) hashes.clear();
    hash = hashKey(key);
    hashes.set(key, hash);
  }
  return hash;
}

/** For admin routes: the caller must hold the admin role. */
export function requireAdmin(request: FastifyRequest): Caller {
  const caller = request.caller;
  if (!caller) throw errors.missingKey();
  if (caller.user.role !== 'admin') throw errors.adminRequired();
  return caller;
}

/** For team-scoped admin routes: the caller must be an admin, or a team admin who has a team. */
export function requireManager(request: FastifyRequest): Caller {
  const caller = request.caller;
  if (!caller) throw errors.missingKey();
  if (caller.user.role === 'admin') return caller;
  if (caller.user.role === 'team_admin' && caller.user.team !== null) return caller;
  throw errors.adminRequired();
}

/**
 * For routes making a key for the caller themselves: only a caller of an API key. A key made with
 * a token or a session would keep the role and team the groups gave when it was made, after the
 * groups change and for as long as the key lives (docs/identity.md).
 */
export function requireKeyCaller(request: FastifyRequest): void {
  if (request.credential !== 'key') throw errors.forbidden(KEYS_FOR_KEY_CALLERS);
}

const KEYS_FOR_KEY_CALLERS =
  'API keys are made with an API key, not with a token or single sign-on (a key would keep the role your groups give today after they change): call with your token, or ask an admin for a key';

/** The authenticated caller of a /v1 route. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw errors.missingKey();
  return request.caller;
}
