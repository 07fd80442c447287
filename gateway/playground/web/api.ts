// The gateway's API as the Playground uses it: same origin, the key in the Authorization header
// (never in a URL) or, signed in with single sign-on, the session's HttpOnly cookie, answers typed by the server's response schemas, and every failure an
// ApiFailure carrying the gateway's error envelope.

import type { ReadinessView } from '../../http/views/readiness.ts';
import type { SignInOptionsView as SignInOptions } from '../../http/views/sign-in.ts';

export type { SignInOptions };

export interface ErrorEnvelope {
  readonly message: string;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string | null;
  readonly param: string | null;
  /** Seconds, from Retry-After (429, 503). */
  readonly retryAfter: number | null;

  constructor(status: number, error: ErrorEnvelope, retryAfter: number | null = null) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.param = error.param;
    this.retryAfter = retryAfter;
  }
}

// The answers' types are the server's own response schemas (gateway/http/views/), imported as
// types only: nothing of the server's code reaches the bundle, and a field the server adds,
// renames or drops is a compile error here rather than a drifted copy.
export type { ModelList, ModelView as Model } from '../../http/views/models.ts';
export type {
  KeyList,
  KeyView as ApiKey,
  MeView as Me,
  NewKeyView as NewApiKey,
  SpendView as Spend,
  TeamList,
  TeamView as Team,
  UserList,
  UserView as User,
} from '../../http/views/accounts.ts';
export type {
  ProviderList,
  ProviderView as Provider,
  RouterList,
  RouterView as Router,
  RoutingLiveView as RoutingLive,
} from '../../http/views/catalog.ts';
export type { ReadinessView as Readiness, RedisView as RedisStatus } from '../../http/views/readiness.ts';
export type {
  DailyUsage,
  SpendReport,
  TotalsView as Totals,
  UsageGroup as SpendGroup,
  UsagePage,
  UsageRecordView as UsageRecord,
} from '../../http/views/usage.ts';

/** The usage block of an answer (spec 2.5). */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  /** Present when the backend served some of the prompt from its cache (and, of Anthropic, wrote some to it). */
  readonly prompt_tokens_details?: { readonly cached_tokens: number; readonly cache_write_tokens?: number };
  readonly cost: number;
  readonly carbon: { readonly kWh: number; readonly kgCO2eq: number };
}

/** Query strings carry filters only; the key goes in the header. */
export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Path segment of a name that may hold slashes (router names): the API takes them as they are. */
export function segment(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

/** Signed in with single sign-on, the key is '': the browser sends the session cookie instead (same origin). */
export function headers(key: string, json = false): Record<string, string> {
  return { ...(key === '' ? {} : { authorization: `Bearer ${key}` }), ...(json ? { 'content-type': 'application/json' } : {}) };
}

/** What sign-in the gateway offers (GET /auth/options, public). */
export async function signInOptions(): Promise<SignInOptions> {
  try {
    const response = await fetch('/auth/options', { cache: 'no-store' });
    if (response.ok) return (await response.json()) as SignInOptions;
  } catch {
    // Unreachable: key sign-in, as before single sign-on existed.
  }
  return { single_sign_on: null, key_sign_in: true };
}

/** Ends the single sign-on session (its cookie is sent and cleared). */
export async function signOutOfSession(): Promise<void> {
  try {
    await fetch('/auth/logout', { method: 'POST', cache: 'no-store' });
  } catch {
    // The session ends by itself when it expires.
  }
}

/** Sends one request; a non-2xx answer throws ApiFailure with the gateway's own message. */
export async function call<T>(key: string, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: headers(key, body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiFailure(0, { message: 'the gateway could not be reached', type: 'network_error', param: null, code: 'network_error' });
  }
  if (!response.ok) throw await failureOf(response);
  return (await response.json()) as T;
}

/**
 * The gateway's readiness (GET /readyz, public: no key sent): its answer whether ready (200) or
 * not (503); ApiFailure only when the gateway cannot be reached or answers something else.
 */
export async function readiness(): Promise<ReadinessView> {
  let response: Response;
  try {
    response = await fetch('/readyz', { cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, { message: 'the gateway could not be reached', type: 'network_error', param: null, code: 'network_error' });
  }
  if (response.status !== 200 && response.status !== 503) throw await failureOf(response);
  return await response.json();
}

/** An error answer as an ApiFailure, whatever its body (a proxy's HTML page included). */
export async function failureOf(response: Response): Promise<ApiFailure> {
  const retry = Number(response.headers.get('retry-after'));
  const retryAfter = Number.isFinite(retry) && retry > 0 ? retry : null;
  const text = await response.text();
  try {
    const error = (JSON.parse(text) as { error?: ErrorEnvelope }).error;
    if (error && typeof error.message === 'string') return new ApiFailure(response.status, error, retryAfter);
  } catch {
    // Not the gateway's envelope.
  }
  return new ApiFailure(
    response.status,
    { message: `HTTP ${response.status} ${response.statusText}`.trim(), type: 'unknown', param: null, code: null },
    retryAfter,
  );
}
