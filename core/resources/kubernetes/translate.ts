// From a custom resource (metadata and spec, as read from the API server) to the gateway's own
// resource. Pure: no API calls, no clock. Two layers of checks, each reported at a path of the
// custom resource so the operator can set Accepted=False with a message that names the field:
//   1. the CR's spec against its zod schema (crd-schemas.ts), which the API server also enforces
//      but an object stored under an older CRD may not satisfy;
//   2. the gateway resource built from it (RouterSpec, ProviderSpec, UserSpec), for the rules a
//      structural schema cannot express (a url some provider types require, metadata.name as id).
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { ResourceId } from '../fields.ts';
import { RouterSpec } from '../router.ts';
import { ProviderSpec } from '../provider.ts';
import { UserSpec } from '../user.ts';
import { TeamSpec } from '../team.ts';
import type { RateLimitPolicy } from '../limits.ts';
import { formatPath } from '../consistency.ts';
import {
  GatewayTeamSpec,
  GatewayUserSpec,
  ModelProviderSpec,
  ModelRouterSpec,
  type GatewayTeamSpecInput,
  type GatewayUserSpecInput,
  type ModelProviderSpecInput,
  type ModelRouterSpecInput,
  type RateLimits,
} from './crd-schemas.ts';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  generation?: number;
  creationTimestamp?: string;
}

/** What translation reads of a custom resource; the spec is checked here, so it may be anything. */
export interface CustomResource {
  metadata: ObjectMeta;
  spec?: unknown;
}

export type Path = (string | number)[];

export interface Problem {
  /** Where in the custom resource, e.g. ['spec', 'costs', 'promptTokens']. */
  path: Path;
  message: string;
}

export type Translation<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

/** One line for a condition message: `spec.url: is required for type "vllm"; spec.model: ...`. */
export function describeProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${formatPath(p.path)}: ${p.message}`).join('; ');
}

// ---------------------------------------------------------------------------------------------
// ModelRouter -> RouterSpec

export function routerFromCR(cr: CustomResource): Translation<RouterSpec> {
  const parsed = ModelRouterSpec.safeParse(cr.spec ?? {});
  if (!parsed.success) return specProblems(parsed.error, cr.spec);
  const spec = parsed.data;
  const input = defined({
    name: spec.name ?? cr.metadata.name,
    type: spec.type,
    aliases: spec.aliases,
    load_balancing_strategy: spec.loadBalancingStrategy,
    routing_mode: spec.routingMode,
    queue:
      spec.queue &&
      defined({
        max_wait_seconds: spec.queue.maxWaitSeconds,
        max_waiting: spec.queue.maxWaiting,
        when_redis_down: spec.queue.whenRedisDown,
      }),
    fallbacks: spec.fallbacks,
    context_fallback: spec.contextFallback,
    costs: {
      prompt_tokens: spec.costs.promptTokens,
      completion_tokens: spec.costs.completionTokens,
      audio_minutes: spec.costs.audioMinutes,
    },
    max_context_length: spec.maxContextLength,
    max_completion_tokens: spec.maxCompletionTokens,
    rate_limits: spec.rateLimits && rateLimitsFromCR(spec.rateLimits),
  });
  return build(RouterSpec, input, {
    renames: { name: spec.name === undefined ? ['metadata', 'name'] : ['spec', 'name'] },
  });
}

// ---------------------------------------------------------------------------------------------
// ModelProvider -> ProviderSpec

/**
 * `routerName` is the name clients call of the ModelRouter that spec.routerRef names (its
 * spec.name or metadata.name), which the caller resolved. The API key is left out: keys travel
 * apart from resources.
 */
export function providerFromCR(cr: CustomResource, routerName: string): Translation<ProviderSpec> {
  const parsed = ModelProviderSpec.safeParse(cr.spec ?? {});
  if (!parsed.success) return specProblems(parsed.error, cr.spec);
  const spec = parsed.data;
  const { namespace } = cr.metadata;
  if (!namespace)
    return { ok: false, problems: [{ path: ['metadata', 'namespace'], message: 'is required: a ModelProvider lives in a namespace' }] };
  const input = defined({
    type: spec.type,
    id: providerId(namespace, cr.metadata.name),
    router: routerName,
    model_name: spec.model,
    url: spec.url,
    timeout: spec.timeoutSeconds,
    timeouts:
      spec.timeouts &&
      defined({
        connect_seconds: spec.timeouts.connectSeconds,
        first_byte_seconds: spec.timeouts.firstByteSeconds,
        between_chunks_seconds: spec.timeouts.betweenChunksSeconds,
      }),
    retries: spec.retries,
    health_check:
      spec.healthCheck &&
      defined({
        enabled: spec.healthCheck.enabled,
        interval_seconds: spec.healthCheck.intervalSeconds,
        timeout_seconds: spec.healthCheck.timeoutSeconds,
        path: spec.healthCheck.path,
        unhealthy_after: spec.healthCheck.unhealthyAfter,
        healthy_after: spec.healthCheck.healthyAfter,
      }),
    max_concurrent: spec.maxConcurrent,
    carbon:
      spec.carbon &&
      defined({
        params_total_b: spec.carbon.paramsTotalB,
        params_active_b: spec.carbon.paramsActiveB,
        zone: spec.carbon.zone,
        pue: spec.carbon.pue,
        gwp_kg_per_kwh: spec.carbon.gwpKgPerKwh,
      }),
    simulator: spec.simulator && {
      latency_ms: spec.simulator.latencyMs,
      tokens_per_second: spec.simulator.tokensPerSecond,
      completion_tokens: spec.simulator.completionTokens,
    },
  });
  return build(ProviderSpec, input, {
    renames: {
      id: ['metadata', 'name'],
      router: ['spec', 'routerRef', 'name'],
      model_name: ['spec', 'model'],
      timeout: ['spec', 'timeoutSeconds'],
    },
    forType: ` for type "${spec.type}"`,
  });
}

/**
 * The provider id of a ModelProvider: `<namespace>-<name>` when that is a valid id (at most 63
 * lowercase letters, digits and -). Otherwise (a name with dots, or too long) a readable prefix
 * and 8 hex digits of a hash of namespace/name, so distinct objects keep distinct ids.
 */
export function providerId(namespace: string, name: string): string {
  const plain = `${namespace}-${name}`;
  if (ResourceId.safeParse(plain).success) return plain;
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 8);
  const prefix = plain
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 63 - hash.length - 1)
    .replace(/^-+|-+$/g, '');
  return prefix ? `${prefix}-${hash}` : hash;
}

// ---------------------------------------------------------------------------------------------
// GatewayUser -> UserSpec

export function userFromCR(cr: CustomResource): Translation<UserSpec> {
  const parsed = GatewayUserSpec.safeParse(cr.spec ?? {});
  if (!parsed.success) return specProblems(parsed.error, cr.spec);
  const spec = parsed.data;
  const input = {
    id: cr.metadata.name,
    name: spec.displayName ?? cr.metadata.name,
    role: spec.role,
    team: spec.teamRef?.name ?? null,
    budget: spec.budget ?? null,
    budget_period: spec.budgetPeriod ?? null,
    budget_alerts: spec.budgetAlerts ?? null,
    soft_budget: spec.softBudget ?? false,
    allowed_routers: spec.allowedRouters ?? null,
    priority: spec.priority ?? null,
    rate_limits: spec.rateLimits ? rateLimitsFromCR(spec.rateLimits) : null,
  };
  return build(UserSpec, input, {
    renames: {
      id: ['metadata', 'name'],
      name: spec.displayName === undefined ? ['metadata', 'name'] : ['spec', 'displayName'],
      team: ['spec', 'teamRef', 'name'],
    },
  });
}

// ---------------------------------------------------------------------------------------------
// GatewayTeam -> TeamSpec

export function teamFromCR(cr: CustomResource): Translation<TeamSpec> {
  const parsed = GatewayTeamSpec.safeParse(cr.spec ?? {});
  if (!parsed.success) return specProblems(parsed.error, cr.spec);
  const spec = parsed.data;
  const input = {
    id: cr.metadata.name,
    name: spec.displayName ?? cr.metadata.name,
    budget: spec.budget ?? null,
    budget_period: spec.budgetPeriod ?? null,
    budget_alerts: spec.budgetAlerts ?? null,
    soft_budget: spec.softBudget ?? false,
    allowed_routers: spec.allowedRouters ?? null,
    priority: spec.priority ?? 0,
    rate_limits: spec.rateLimits ? rateLimitsFromCR(spec.rateLimits) : null,
  };
  return build(TeamSpec, input, {
    renames: { id: ['metadata', 'name'], name: spec.displayName === undefined ? ['metadata', 'name'] : ['spec', 'displayName'] },
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers

function rateLimitsFromCR(limits: z.output<typeof RateLimits>): RateLimitPolicy {
  return defined({
    requests_per_minute: limits.requestsPerMinute,
    requests_per_day: limits.requestsPerDay,
    tokens_per_minute: limits.tokensPerMinute,
    tokens_per_day: limits.tokensPerDay,
  });
}

/** Layer 1: the spec's own schema; its paths are already the CR's, under spec. */
function specProblems(error: z.ZodError, spec: unknown): { ok: false; problems: Problem[] } {
  const problems = error.issues.flatMap((issue): Problem[] => {
    const path = ['spec', ...(issue.path as Path)];
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ path: [...path, key], message: 'is not a field of this resource' }));
    if (isMissing(issue, spec)) return [{ path, message: 'is required' }];
    return [{ path, message: issue.message }];
  });
  return { ok: false, problems };
}

interface PathMapping {
  /** First segment of a gateway field -> its path in the CR; other fields go to spec.<camelCase>. */
  renames: Record<string, Path>;
  /** Appended to "is required" and "is not used": ` for type "vllm"`. */
  forType?: string;
}

/** Layer 2: the gateway resource, with each problem moved back to the CR field it came from. */
function build<S extends z.ZodType>(schema: S, input: Record<string, unknown>, mapping: PathMapping): Translation<z.output<S>> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const forType = mapping.forType ?? '';
  const toCR = (path: Path): Path => {
    const [first, ...rest] = path;
    const head =
      typeof first === 'string' && mapping.renames[first]
        ? mapping.renames[first]
        : ['spec', ...(first === undefined ? [] : [camelCase(first)])];
    return [...head, ...rest.map(camelCase)];
  };
  const problems = parsed.error.issues.flatMap((issue): Problem[] => {
    const path = issue.path as Path;
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ path: toCR([...path, key]), message: `is not used${forType}` }));
    if (isMissing(issue, input)) return [{ path: toCR(path), message: `is required${forType}` }];
    return [{ path: toCR(path), message: issue.message }];
  });
  return { ok: false, problems };
}

/** A required field that is absent (zod reports it as a wrong type or a wrong enum value). */
function isMissing(issue: z.core.$ZodIssue, input: unknown): boolean {
  return (
    (issue.code === 'invalid_type' || issue.code === 'invalid_value') &&
    issue.path.length > 0 &&
    valueAt(input, issue.path as Path) === undefined
  );
}

function camelCase<T extends string | number>(segment: T): T {
  return (typeof segment === 'string' ? segment.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : segment) as T;
}

function valueAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

/** The object without its undefined-valued keys (an absent field stays absent). */
function defined<T extends Record<string, unknown>>(object: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

// ---------------------------------------------------------------------------------------------
// The other way: gateway resources -> custom resources (what the admin API writes in Kubernetes
// mode). Each is the inverse of the translation above: xFromCR(xToCR(spec)) gives spec back.

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * metadata.name of the ModelRouter for a router name: the name itself when it is a valid
 * Kubernetes object name; otherwise (upper case, `/`, `:`, ...) a readable folding of it and 8 hex
 * digits of its hash, so distinct router names get distinct objects. Set spec.name when the
 * result differs from the router name (see routerToCR).
 */
export function routerObjectName(routerName: string): string {
  if (routerName.length <= 253 && DNS_SUBDOMAIN.test(routerName)) return routerName;
  const hash = createHash('sha256').update(routerName).digest('hex').slice(0, 8);
  const prefix = routerName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 200)
    .replace(/^-+|-+$/g, '');
  return prefix ? `${prefix}-${hash}` : hash;
}

/**
 * metadata.name of a new ModelProvider asked for with provider id `requested`, in `namespace`:
 * the id without a leading `<namespace>-`, cut so that the provider id the operator derives,
 * `<namespace>-<name>` (providerId), stays a plain id. The provider is served under that id.
 */
export function providerObjectName(namespace: string, requested: string): string {
  const base = requested.startsWith(`${namespace}-`) ? requested.slice(namespace.length + 1) : requested;
  const room = 63 - namespace.length - 1;
  const name = base.slice(0, Math.max(room, 1)).replace(/^-+|-+$/g, '');
  return (
    name ||
    createHash('sha256')
      .update(requested)
      .digest('hex')
      .slice(0, Math.max(1, Math.min(8, room)))
  );
}

/** The Secret the gateway writes a provider's API key to, given through the admin API. */
export function providerKeySecretName(providerObject: string): string {
  return `${providerObject}-api-key`;
}
/** The key of the API key in that Secret's data. */
export const PROVIDER_KEY_FIELD = 'api-key';

export function routerToCR(spec: RouterSpec, objectName: string): ModelRouterSpecInput {
  return defined({
    name: spec.name === objectName ? undefined : spec.name,
    type: spec.type,
    aliases: spec.aliases,
    loadBalancingStrategy: spec.load_balancing_strategy,
    routingMode: spec.routing_mode,
    queue:
      spec.queue &&
      defined({
        maxWaitSeconds: spec.queue.max_wait_seconds,
        maxWaiting: spec.queue.max_waiting,
        whenRedisDown: spec.queue.when_redis_down,
      }),
    fallbacks: spec.fallbacks.length > 0 ? spec.fallbacks : undefined,
    contextFallback: spec.context_fallback,
    costs: {
      promptTokens: spec.costs.prompt_tokens,
      completionTokens: spec.costs.completion_tokens,
      // Left out while 0, so that routers that are not transcription routers read as before.
      ...(spec.costs.audio_minutes === '0' ? {} : { audioMinutes: spec.costs.audio_minutes }),
    },
    maxContextLength: spec.max_context_length,
    maxCompletionTokens: spec.max_completion_tokens,
    rateLimits: spec.rate_limits && rateLimitsToCR(spec.rate_limits),
  });
}

/** The key is not in the spec: `apiKeySecretRef` names where it is. */
export function providerToCR(
  spec: ProviderSpec,
  routerObject: string,
  apiKeySecretRef?: { name: string; key: string },
): ModelProviderSpecInput {
  return defined({
    routerRef: { name: routerObject },
    type: spec.type,
    model: spec.model_name,
    url: 'url' in spec ? spec.url : undefined,
    apiKeySecretRef,
    timeoutSeconds: spec.timeout,
    timeouts:
      spec.timeouts &&
      defined({
        connectSeconds: spec.timeouts.connect_seconds,
        firstByteSeconds: spec.timeouts.first_byte_seconds,
        betweenChunksSeconds: spec.timeouts.between_chunks_seconds,
      }),
    retries: spec.retries,
    healthCheck:
      spec.health_check &&
      defined({
        enabled: spec.health_check.enabled,
        intervalSeconds: spec.health_check.interval_seconds,
        timeoutSeconds: spec.health_check.timeout_seconds,
        path: spec.health_check.path,
        unhealthyAfter: spec.health_check.unhealthy_after,
        healthyAfter: spec.health_check.healthy_after,
      }),
    maxConcurrent: spec.max_concurrent,
    carbon:
      spec.carbon &&
      defined({
        paramsTotalB: spec.carbon.params_total_b,
        paramsActiveB: spec.carbon.params_active_b,
        zone: spec.carbon.zone,
        pue: spec.carbon.pue,
        gwpKgPerKwh: spec.carbon.gwp_kg_per_kwh,
      }),
    simulator:
      'simulator' in spec
        ? {
            latencyMs: spec.simulator.latency_ms,
            tokensPerSecond: spec.simulator.tokens_per_second,
            completionTokens: spec.simulator.completion_tokens,
          }
        : undefined,
  });
}

/** metadata.name is the user id; the operator writes the user's API key (spec.apiKeySecret unset). */
export function userToCR(spec: UserSpec): GatewayUserSpecInput {
  return defined({
    displayName: spec.name === spec.id ? undefined : spec.name,
    role: spec.role,
    teamRef: spec.team === null ? undefined : { name: spec.team },
    budget: spec.budget ?? undefined,
    budgetPeriod: spec.budget_period ?? undefined,
    budgetAlerts: spec.budget_alerts ?? undefined,
    softBudget: spec.soft_budget ? true : undefined,
    allowedRouters: spec.allowed_routers ?? undefined,
    priority: spec.priority ?? undefined,
    rateLimits: spec.rate_limits ? rateLimitsToCR(spec.rate_limits) : undefined,
  });
}

/** metadata.name is the team id. */
export function teamToCR(spec: TeamSpec): GatewayTeamSpecInput {
  return defined({
    displayName: spec.name === spec.id ? undefined : spec.name,
    budget: spec.budget ?? undefined,
    budgetPeriod: spec.budget_period ?? undefined,
    budgetAlerts: spec.budget_alerts ?? undefined,
    softBudget: spec.soft_budget ? true : undefined,
    allowedRouters: spec.allowed_routers ?? undefined,
    priority: spec.priority === 0 ? undefined : spec.priority,
    rateLimits: spec.rate_limits ? rateLimitsToCR(spec.rate_limits) : undefined,
  });
}

function rateLimitsToCR(limits: RateLimitPolicy): z.input<typeof RateLimits> {
  return defined({
    requestsPerMinute: limits.requests_per_minute,
    requestsPerDay: limits.requests_per_day,
    tokensPerMinute: limits.tokens_per_minute,
    tokensPerDay: limits.tokens_per_day,
  });
}
