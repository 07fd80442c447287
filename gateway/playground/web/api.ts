// The gateway's API as the Playground uses it: same origin, the key in the Authorization header
// (never in a URL), answers typed after docs/admin-api.md, and every failure an ApiFailure
// carrying the gateway's error envelope.

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

export interface List<T> {
  readonly object: 'list';
  readonly data: T[];
  readonly next?: string | null;
}

export interface Model {
  readonly id: string;
  readonly type: string;
  readonly aliases: string[];
  readonly max_context_length: number;
}

export type BudgetPeriod = 'daily' | 'weekly' | 'monthly';

export interface User {
  readonly id: string;
  readonly name: string;
  readonly role: 'admin' | 'team_admin' | 'user';
  /** The team the user is in, or null. */
  readonly team: string | null;
  readonly budget: number | null;
  readonly budget_period: BudgetPeriod | null;
  readonly allowed_routers: string[] | null;
  /** Order of the user's waiting requests in queue mode; higher first; null: the team's. */
  readonly priority: number | null;
  readonly created_at: string;
  readonly spent: number;
  readonly reserved: number;
  readonly remaining: number | null;
  readonly period_start: string | null;
  readonly period_end: string | null;
}

/** Where a budget stands this period. */
export interface Spend {
  readonly spent: number;
  readonly reserved: number;
  readonly remaining: number | null;
}

/** GET /v1/admin/teams: a team, what it spent and its members. */
export interface Team extends Spend {
  readonly id: string;
  readonly name: string;
  readonly budget: number | null;
  readonly budget_period: BudgetPeriod | null;
  readonly priority: number;
  readonly members: string[];
  /** Its users' keys in use, with each key's own budget. */
  readonly keys: {
    readonly id: string;
    readonly user_id: string;
    readonly name: string;
    readonly hint: string;
    readonly budget: number | null;
  }[];
}

export interface Me extends User {
  readonly key: { readonly id: string; readonly name: string; readonly hint: string };
}

export interface ApiKey {
  readonly id: string;
  readonly user_id: string;
  readonly name: string;
  readonly hint: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  /** The key's own budget (null: its user's alone), and where it stands. */
  readonly budget: number | null;
  readonly budget_period: BudgetPeriod | null;
  readonly spend?: Spend;
}

/** Only the answer that creates a key has its secret. */
export interface NewApiKey extends ApiKey {
  readonly key: string;
}

export interface Router {
  readonly name: string;
  readonly type: string;
  readonly load_balancing_strategy: string;
  readonly aliases: string[];
  readonly costs: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly audio_minutes: number };
  readonly max_context_length: number;
  readonly max_completion_tokens: number | null;
  /** null: the gateway's --routing-mode. */
  readonly routing_mode: 'local' | 'queue' | null;
  /** Routers tried in order when this one cannot serve. */
  readonly fallbacks: string[];
  /** null: on when fallbacks are set. */
  readonly context_fallback: boolean | null;
  readonly providers: string[];
}

/** GET /v1/admin/routing: each router's mode and queue, each provider's capacity and use. */
export interface RoutingLive {
  readonly routers: { readonly name: string; readonly routing_mode: 'local' | 'queue'; readonly queue_depth: number | null }[];
  readonly providers: {
    readonly id: string;
    readonly router: string;
    readonly max_concurrent: number | null;
    readonly in_use: number | null;
    readonly in_flight_here: number;
    readonly cooling_until: string | null;
    readonly ttft_ms: number | null;
    readonly breaker: 'closed' | 'open' | 'half_open';
    readonly breaker_reason: string | null;
    /** null while the provider is not checked. */
    readonly healthy: boolean | null;
    readonly health_reason: string | null;
  }[];
}

export interface CarbonInputs {
  readonly params_total_b?: number;
  readonly params_active_b?: number;
  readonly zone?: string;
  readonly pue?: number;
}

export interface Provider {
  readonly id: string;
  readonly router: string;
  readonly type: string;
  readonly model_name: string;
  readonly url?: string;
  /** Absent: the gateway's timeouts. */
  readonly timeout?: number;
  readonly retries?: number;
  readonly health_check?: { readonly enabled: boolean; readonly interval_seconds: number };
  /** Most requests at once; absent: unlimited. */
  readonly max_concurrent?: number;
  readonly carbon: CarbonInputs | null;
  readonly simulator?: { readonly latency_ms: number; readonly tokens_per_second: number; readonly completion_tokens: number };
  readonly has_key: boolean;
}

/** What requests used, cost and emitted: one record's, or the sum over many (totals, days). */
export interface Measures {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly cost: number;
  /** Of the cost, what the budget had no room left for (docs/budgets.md). */
  readonly uncovered?: number;
  readonly kwh: number;
  readonly kgco2eq: number;
}

export interface Totals extends Measures {
  readonly requests: number;
}

export interface UsageRecord extends Measures {
  readonly id: string;
  readonly time: string;
  readonly model: string;
  readonly status: number;
  readonly latency_ms: number | null;
  readonly incomplete: boolean;
}

export interface UsagePage extends List<UsageRecord> {
  readonly next: string | null;
  readonly totals: Totals;
}

export interface DailyUsage extends List<Totals & { readonly date: string }> {
  readonly totals: Totals;
}

/** What a spend report groups by. */
export type SpendGroup = 'team' | 'user' | 'key' | 'router' | 'provider';

/** GET /v1/usage/report: each team's, user's, key's, router's or provider's totals over a range, dearest first. */
export interface SpendReport {
  readonly group_by: SpendGroup;
  readonly from: string;
  readonly to: string;
  readonly data: (Totals & { readonly [G in SpendGroup]?: string })[];
  readonly totals: Totals;
}

/** The usage block of an answer (spec 2.5). */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
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

export function headers(key: string, json = false): Record<string, string> {
  return { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}) };
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
