// The Kubernetes face of the gateway's resources: spec and status of the ModelRouter,
// ModelProvider and GatewayUser custom resources (tollgate.dev/v1alpha1), camelCase as the
// Kubernetes API conventions ask. Vocabularies and field schemas are the gateway resources' own
// wherever they fit, so an enum, a bound or a default is declared once. These schemas are the
// single source of the CRDs: operator/generate-crds.ts turns them into crds/*.yaml (see crds.ts),
// and translate.ts maps a parsed spec onto the gateway's resources.
import { z } from 'zod';
import { BUDGET_PERIODS, DEFAULT_URLS, GRID_FACTORS, PROVIDER_KINDS, PROVIDER_TYPES, URL_REQUIRED } from '../kinds.ts';
import { BaseUrl, ModelName } from '../fields.ts';
import { RateLimitPolicy } from '../limits.ts';
import { RouterQueue, RouterSpec } from '../router.ts';
import { HealthCheck, ProviderSpec, ProviderTimeouts, SimulatorOptions } from '../provider.ts';
import { Priority, PRIORITY_RANGE, UserSpec } from '../user.ts';
import { TeamSpec } from '../team.ts';
import { CarbonInputs } from '../carbon.ts';
import { MoneyString, ObjectName, PriceString, SecretKey, UserObjectName } from './kube-fields.ts';

export const GROUP = 'tollgate.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

// ---------------------------------------------------------------------------------------------
// Status parts

const Generation = z.number().int().min(0).meta({ format: 'int64' });
const Count = z.number().int().min(0).max(1_000_000).meta({ format: 'int32' });

// metav1.Condition, with its own bounds and patterns.
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

export const Condition = z
  .strictObject({
    type: z
      .string()
      .min(1)
      .max(316)
      .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/)
      .describe(
        'Type of condition in CamelCase: Accepted (the spec is valid), ResolvedRefs (the objects it names exist), Ready (the gateway serves it).',
      ),
    status: z.enum(CONDITION_STATUSES).describe('Status of the condition: True, False or Unknown.'),
    observedGeneration: Generation.optional().describe('metadata.generation of the object the condition was set from.'),
    lastTransitionTime: z.iso.datetime().describe('When the condition last changed from one status to another (RFC 3339).'),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
      .describe('Why the condition has its status, in CamelCase (for example InvalidSpec, RouterNotFound).'),
    message: z.string().max(32768).describe('What happened, for humans; may be empty.'),
  })
  .describe("One aspect of the object's state, in the shape of Kubernetes metav1.Condition.");
export type Condition = z.output<typeof Condition>;

const statusCommon = {
  observedGeneration: Generation.optional().describe('metadata.generation of the spec this status describes.'),
  conditions: z
    .array(Condition)
    .max(16)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
    .describe('Current state, one condition per type: Accepted, ResolvedRefs and Ready.'),
};

// ---------------------------------------------------------------------------------------------
// Reused parts of the gateway resources, in camelCase

const limits = RateLimitPolicy.shape;
export const RateLimits = z
  .strictObject({
    requestsPerMinute: limits.requests_per_minute,
    requestsPerDay: limits.requests_per_day,
    tokensPerMinute: limits.tokens_per_minute,
    tokensPerDay: limits.tokens_per_day,
  })
  .describe(RateLimitPolicy.description ?? 'Rate limits.');

const carbon = CarbonInputs.shape;
export const Carbon = z
  .strictObject({
    paramsTotalB: carbon.params_total_b,
    paramsActiveB: carbon.params_active_b,
    zone: carbon.zone,
    pue: carbon.pue,
    gwpKgPerKwh: carbon.gwp_kg_per_kwh,
  })
  .superRefine((value, ctx) => {
    // The gateway's rule (CarbonInputs), worded with this resource's field names.
    if (value.gwpKgPerKwh === undefined && !(value.zone in GRID_FACTORS)) {
      ctx.addIssue({
        code: 'custom',
        path: ['zone'],
        message: `has no built-in emission factor (known: ${Object.keys(GRID_FACTORS).join(', ')}); set gwpKgPerKwh`,
      });
    }
  })
  .describe('Inputs of the carbon estimate of requests served by this provider; without a parameter count it reports 0.');

const simulator = SimulatorOptions.shape;
export const Simulator = z
  .strictObject({
    latencyMs: simulator.latency_ms,
    tokensPerSecond: simulator.tokens_per_second,
    completionTokens: simulator.completion_tokens,
  })
  .describe('Behaviour of the built-in simulator; only for type simulator.');

/** Fields every branch of the provider union shares (the first branch has them all). */
const providerCommon = ProviderSpec.options[0].shape;

// ---------------------------------------------------------------------------------------------
// ModelRouter

export const RouterCostsSpec = z
  .strictObject({
    promptTokens: PriceString.default('0').describe(
      'Price per one million prompt (input) tokens, as a decimal string with at most 9 decimal places, e.g. "0.15".',
    ),
    completionTokens: PriceString.default('0').describe(
      'Price per one million completion (output) tokens, as a decimal string with at most 9 decimal places, e.g. "0.60".',
    ),
    // No default: routers that transcribe nothing read as before, without it.
    audioMinutes: PriceString.optional().describe(
      'Price per minute of audio transcribed (automatic-speech-recognition routers), besides the token prices, e.g. "0.006". Absent: 0.',
    ),
  })
  .describe('Prices per one million tokens (and per minute of audio), in the money of user budgets. Absent prices are 0 (free).');

const queue = RouterQueue.shape;
export const RouterQueueSpec = z
  .strictObject({
    maxWaitSeconds: queue.max_wait_seconds,
    maxWaiting: queue.max_waiting,
    whenRedisDown: queue.when_redis_down,
  })
  .describe(RouterQueue.description ?? 'Queue settings.');

export const ModelRouterSpec = z
  .strictObject({
    name: ModelName.optional().describe(
      'Model name clients call (the `model` of a request); defaults to metadata.name. Set it when the name has characters a Kubernetes name cannot, e.g. meta-llama/Llama-3.1-8B.',
    ),
    type: RouterSpec.shape.type,
    aliases: RouterSpec.shape.aliases,
    loadBalancingStrategy: RouterSpec.shape.load_balancing_strategy,
    routingMode: RouterSpec.shape.routing_mode,
    queue: RouterQueueSpec.optional(),
    fallbacks: RouterSpec.shape.fallbacks,
    contextFallback: RouterSpec.shape.context_fallback,
    costs: RouterCostsSpec.default({ promptTokens: '0', completionTokens: '0' }),
    maxContextLength: RouterSpec.shape.max_context_length,
    maxCompletionTokens: RouterSpec.shape.max_completion_tokens,
    rateLimits: RateLimits.optional().describe(
      "Rate limits applied to each user of this router; a GatewayUser's own rateLimits replace them.",
    ),
  })
  .describe('A model name clients call, its prices and limits. ModelProviders in the same namespace serve it.');
export type ModelRouterSpec = z.output<typeof ModelRouterSpec>;
export type ModelRouterSpecInput = z.input<typeof ModelRouterSpec>;

export const ModelRouterStatus = z
  .strictObject({
    ...statusCommon,
    publicName: ModelName.optional().describe(
      'The model name clients call, once accepted: spec.name, or metadata.name when spec.name is absent.',
    ),
    providers: z
      .strictObject({
        ready: Count.describe('ModelProviders of this router that the gateway serves.'),
        total: Count.describe('ModelProviders that name this router in spec.routerRef.'),
      })
      .optional()
      .describe("How many of this router's providers are ready."),
    routingMode: RouterSpec.shape.routing_mode.describe('The routing mode the gateways apply: spec.routingMode, or their process setting.'),
    queueDepth: Count.optional().describe(
      'Queue mode: requests waiting for a provider slot, across the fleet, when status was last written.',
    ),
  })
  .describe('State of the router, written by the operator.');
export type ModelRouterStatus = z.output<typeof ModelRouterStatus>;

// ---------------------------------------------------------------------------------------------
// ModelProvider

const timeouts = ProviderTimeouts.shape;
export const ProviderTimeoutsSpec = z
  .strictObject({
    connectSeconds: timeouts.connect_seconds,
    firstByteSeconds: timeouts.first_byte_seconds,
    betweenChunksSeconds: timeouts.between_chunks_seconds,
  })
  .describe(ProviderTimeouts.description ?? 'Timeouts.');

const health = HealthCheck.shape;
export const HealthCheckSpec = z
  .strictObject({
    enabled: health.enabled,
    intervalSeconds: health.interval_seconds,
    timeoutSeconds: health.timeout_seconds,
    path: health.path,
    unhealthyAfter: health.unhealthy_after,
    healthyAfter: health.healthy_after,
  })
  .describe(HealthCheck.description ?? 'Health checks.');

export const ModelProviderSpec = z
  .strictObject({
    routerRef: z
      .strictObject({ name: ObjectName.describe('metadata.name of the ModelRouter.') })
      .describe('The ModelRouter this provider serves, in the same namespace.'),
    type: z.enum(PROVIDER_TYPES).describe('Backend API kind; decides how requests are sent to the backend.'),
    model: providerCommon.model_name,
    url: z
      .string()
      .max(2048, 'must be at most 2048 characters')
      .regex(/^https?:\/\/\S+$/, 'must be an absolute http:// or https:// URL')
      .pipe(BaseUrl)
      .optional()
      .describe(
        `Base address of the backend, without /v1. Required for ${listed(URL_REQUIRED)}; ${listed(Object.keys(DEFAULT_URLS))} default to their usual address; ${listed(PROVIDER_TYPES.filter((type) => PROVIDER_KINDS[type].url === 'none'))} takes none.`,
      ),
    apiKeySecretRef: z
      .strictObject({
        name: ObjectName.describe('Name of the Secret, in the same namespace.'),
        key: SecretKey.describe("Key of the API key in the Secret's data."),
      })
      .optional()
      .describe("Where the backend's API key is: a key of a Secret in the same namespace. Absent: requests go without a key."),
    timeoutSeconds: providerCommon.timeout,
    timeouts: ProviderTimeoutsSpec.optional(),
    retries: providerCommon.retries,
    healthCheck: HealthCheckSpec.optional(),
    maxConcurrent: providerCommon.max_concurrent,
    carbon: Carbon.optional(),
    simulator: Simulator.optional(),
  })
  .describe('One backend that serves a ModelRouter: its kind, address, model name and API key.');
export type ModelProviderSpec = z.output<typeof ModelProviderSpec>;
export type ModelProviderSpecInput = z.input<typeof ModelProviderSpec>;

export const ModelProviderStatus = z.strictObject({ ...statusCommon }).describe('State of the provider, written by the operator.');
export type ModelProviderStatus = z.output<typeof ModelProviderStatus>;

// ---------------------------------------------------------------------------------------------
// GatewayUser

/** A GatewayUser's or GatewayTeam's budget, its period and alerts (`whose`: who spends it). */
function budgetFieldsCR(whose: string) {
  return {
    budget: MoneyString.optional().describe(
      `Most ${whose} may spend in a budget period (in all, without budgetPeriod), in the money of router prices, as a decimal string with at most 6 decimal places, e.g. "25.50". Absent: unlimited.`,
    ),
    budgetPeriod: z
      .enum(BUDGET_PERIODS)
      .optional()
      .describe('When spending resets, on UTC calendar boundaries (weeks start on Monday). Absent: it never resets.'),
    budgetAlerts: z
      .array(z.number().int().min(1).max(1000).meta({ format: 'int32' }))
      .max(10)
      .optional()
      .describe(
        'Percentages of the budget at which a BudgetThresholdReached event (and webhook) is raised, once per period each, e.g. [50, 80, 100]. Absent: none.',
      ),
    softBudget: z.boolean().optional().describe('true: the budget only alerts, it never refuses a request. Absent: false.'),
  };
}

export const GatewayUserSpec = z
  .strictObject({
    displayName: UserSpec.shape.name.optional().describe('Display name; defaults to metadata.name.'),
    role: UserSpec.shape.role,
    ...budgetFieldsCR('the user'),
    allowedRouters: z
      .array(ModelName)
      .max(256)
      .optional()
      .describe(
        'Routers the user may call, by the names clients call (ModelRouter spec.name, or metadata.name). Absent: all routers; empty: none.',
      ),
    teamRef: z
      .strictObject({ name: UserObjectName.describe('Name of the GatewayTeam, in the same namespace.') })
      .optional()
      .describe("The GatewayTeam the user belongs to: the team's budget and limits apply too. Absent: no team."),
    // No default here: the server would write `priority: 0` into every GatewayUser.
    priority: Priority.optional().describe(
      `Order of the user's requests waiting for a queue-mode router, from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max}: higher first. Absent: the team's, or 0 without a team.`,
    ),
    rateLimits: RateLimits.optional().describe("Replaces the routers' rate limits for this user. Absent: each router's own apply."),
    apiKeySecret: z
      .strictObject({ name: ObjectName.describe('Name of the Secret, in the same namespace.') })
      .optional()
      .describe("The Secret the operator writes the user's API key to. Absent: <metadata.name>-api-key."),
  })
  .describe('A caller of the gateway: role, budget, allowed routers and rate limits. The operator writes its API key to a Secret.');
export type GatewayUserSpec = z.output<typeof GatewayUserSpec>;
export type GatewayUserSpecInput = z.input<typeof GatewayUserSpec>;

export const GatewayUserStatus = z
  .strictObject({
    ...statusCommon,
    spent: MoneyString.optional().describe(
      'Amount spent in the current budget period (in all, without budgetPeriod), as a decimal string.',
    ),
    remaining: MoneyString.optional().describe('budget minus spent, at least 0, as a decimal string. Absent when the budget is unlimited.'),
    periodStart: z.iso
      .datetime()
      .optional()
      .describe('Start of the budget period that spent counts (RFC 3339). Absent without budgetPeriod.'),
    requests: z.number().int().min(0).meta({ format: 'int64' }).optional().describe('Requests the user made in the current budget period.'),
    lastRequestTime: z.iso.datetime().optional().describe('When the user last made a request (RFC 3339).'),
    apiKeySecretName: ObjectName.optional().describe("Name of the Secret that holds the user's API key, in the same namespace."),
  })
  .describe('State of the user and its spending, written by the operator.');
export type GatewayUserStatus = z.output<typeof GatewayUserStatus>;

export const GatewayTeamSpec = z
  .strictObject({
    displayName: TeamSpec.shape.name.optional().describe('Display name; defaults to metadata.name.'),
    ...budgetFieldsCR("all the team's users together"),
    allowedRouters: z
      .array(ModelName)
      .max(256)
      .optional()
      .describe("Routers the team's users may call (besides each user's own list). Absent: all routers; empty: none."),
    priority: Priority.optional().describe("Priority of the team's users who have none of their own (queue mode). Absent: 0."),
    rateLimits: RateLimits.optional().describe(
      "Limits on all the team's users together, per router, besides each user's own. Absent: none.",
    ),
  })
  .describe("A team of GatewayUsers (those whose spec.teamRef names it): a budget and limits they share, besides each user's own.");
export type GatewayTeamSpec = z.output<typeof GatewayTeamSpec>;
export type GatewayTeamSpecInput = z.input<typeof GatewayTeamSpec>;

export const GatewayTeamStatus = z
  .strictObject({
    ...statusCommon,
    spent: MoneyString.optional().describe('Amount the team spent in the current budget period, as a decimal string.'),
    remaining: MoneyString.optional().describe('budget minus spent, at least 0, as a decimal string. Absent when the budget is unlimited.'),
    periodStart: z.iso
      .datetime()
      .optional()
      .describe('Start of the budget period that spent counts (RFC 3339). Absent without budgetPeriod.'),
    members: Count.optional().describe('GatewayUsers whose spec.teamRef names this team.'),
  })
  .describe('State of the team and its spending, written by the operator.');
export type GatewayTeamStatus = z.output<typeof GatewayTeamStatus>;

/** `a, b and c`, for prose written from a list. */
function listed(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}
