// The Kubernetes face of the gateway's resources: spec and status of the ModelRouter,
// ModelProvider, GatewayUser and GatewayTeam custom resources (tollgate.dev/v1alpha1), camelCase as
// the Kubernetes API conventions ask. Each spec is derived from its resource's schema by the kind's
// field table (router-fields.ts, provider-fields.ts, user-fields.ts; see field-table.ts), so a
// field, its bounds, enum and default are declared once, in the resource. These schemas are the
// single source of the CRDs: operator/generate-crds.ts turns them into crds/*.yaml (see crds.ts),
// and translate.ts maps a parsed spec onto the gateway's resources and back.
import { z } from 'zod';
import { ModelName } from '../fields.ts';
import { RouterSpec } from '../router.ts';
import { crObject } from './field-schema.ts';
import { MoneyString, ObjectName } from './kube-fields.ts';
import { PROVIDER_FIELDS } from './provider-fields.ts';
import { ROUTER_FIELDS } from './router-fields.ts';
import { TEAM_FIELDS, USER_FIELDS } from './user-fields.ts';

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
// ModelRouter

export const ModelRouterSpec = crObject(ROUTER_FIELDS).describe(
  'A model name clients call, its prices and limits. ModelProviders in the same namespace serve it.',
);

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

export const ModelProviderSpec = crObject(PROVIDER_FIELDS).describe(
  'One backend that serves a ModelRouter: its kind, address, model name and API key.',
);

export const ModelProviderStatus = z
  .strictObject({
    ...statusCommon,
    replicas: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Replicas ready to serve: the ready endpoints of its Service (serviceRef), else the addresses it lists (url or urls).'),
  })
  .describe('State of the provider, written by the operator.');
export type ModelProviderStatus = z.output<typeof ModelProviderStatus>;

// ---------------------------------------------------------------------------------------------
// GatewayUser and GatewayTeam

export const GatewayUserSpec = crObject(USER_FIELDS).describe(
  'A caller of the gateway: role, budget, allowed routers and rate limits. The operator writes its API key to a Secret.',
);

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

export const GatewayTeamSpec = crObject(TEAM_FIELDS).describe(
  "A team of GatewayUsers (those whose spec.teamRef names it): a budget and limits they share, besides each user's own.",
);

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
