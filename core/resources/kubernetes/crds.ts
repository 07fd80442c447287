// The four CustomResourceDefinitions (apiextensions.k8s.io/v1), built from the zod schemas of
// crd-schemas.ts through structuralSchema() (structural-schema.ts), which throws, naming the field,
// on anything Kubernetes cannot take. operator/generate-crds.ts writes the result to crds/; a unit
// test checks the committed files still equal what this produces.
import type { z } from 'zod';
import { dump } from 'js-yaml';
import {
  API_VERSION,
  GROUP,
  GatewayTeamSpec,
  GatewayTeamStatus,
  GatewayUserSpec,
  GatewayUserStatus,
  ModelProviderSpec,
  ModelProviderStatus,
  ModelRouterSpec,
  ModelRouterStatus,
  VERSION,
} from './crd-schemas.ts';
import { UserObjectName } from './kube-fields.ts';
import { ordered, structuralSchema, type JsonObject } from './structural-schema.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  /** 0 (the default) shows in `kubectl get`; 1 only with `-o wide`. */
  priority?: number;
}

export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  /** Restriction of metadata.name, when the name is used as an id with its own rules. */
  metadataName?: z.ZodType;
  printerColumns: PrinterColumn[];
}

const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Status of the Ready condition.',
};
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since creation.' };

export const KINDS = [
  {
    kind: 'ModelRouter',
    plural: 'modelrouters',
    singular: 'modelrouter',
    shortNames: ['mr'],
    description:
      'ModelRouter is a model name that clients of the Tollgate gateway call, with its prices and limits; ModelProviders serve it.',
    spec: ModelRouterSpec,
    status: ModelRouterStatus,
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Model type.' },
      { name: 'Strategy', type: 'string', jsonPath: '.spec.loadBalancingStrategy', description: 'Load-balancing strategy.' },
      { name: 'Mode', type: 'string', jsonPath: '.status.routingMode', description: 'Routing mode the gateways apply: local or queue.' },
      { name: 'Queue', type: 'integer', jsonPath: '.status.queueDepth', description: 'Queue mode: requests waiting for a provider slot.' },
      { name: 'Providers-Ready', type: 'integer', jsonPath: '.status.providers.ready', description: 'Providers the gateway serves.' },
      { name: 'Providers-Total', type: 'integer', jsonPath: '.status.providers.total', description: 'Providers that name this router.' },
      READY,
      AGE,
      { name: 'Model', type: 'string', jsonPath: '.status.publicName', description: 'The model name clients call.', priority: 1 },
    ],
  },
  {
    kind: 'ModelProvider',
    plural: 'modelproviders',
    singular: 'modelprovider',
    shortNames: ['mp'],
    description:
      'ModelProvider is one backend (an OpenAI-compatible server, vLLM, Ollama, TEI, ...) that serves a ModelRouter in the same namespace.',
    spec: ModelProviderSpec,
    status: ModelProviderStatus,
    printerColumns: [
      { name: 'Router', type: 'string', jsonPath: '.spec.routerRef.name', description: 'The ModelRouter it serves.' },
      { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'Backend API kind.' },
      { name: 'Upstream-Model', type: 'string', jsonPath: '.spec.model', description: 'Model name on the backend.' },
      READY,
      {
        name: 'Reason',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
        description: 'Why it is (not) ready: Ready, Unhealthy (its health checks fail, or its circuit breaker is open), InvalidSpec...',
      },
      AGE,
      { name: 'URL', type: 'string', jsonPath: '.spec.url', description: 'Base address of the backend.', priority: 1 },
      {
        name: 'Replicas',
        type: 'integer',
        jsonPath: '.status.replicas',
        description: "Replicas ready: its Service's ready endpoints (serviceRef), else its addresses (url or urls).",
        priority: 1,
      },
      {
        name: 'Max-Concurrent',
        type: 'integer',
        jsonPath: '.spec.maxConcurrent',
        description: 'Most requests at once; empty is unlimited.',
        priority: 1,
      },
    ],
  },
  {
    kind: 'GatewayUser',
    plural: 'gatewayusers',
    singular: 'gatewayuser',
    shortNames: ['gu'],
    description:
      'GatewayUser is a caller of the Tollgate gateway: its role, budget, allowed routers and rate limits. The operator writes its API key to a Secret.',
    spec: GatewayUserSpec,
    status: GatewayUserStatus,
    metadataName: UserObjectName,
    printerColumns: [
      { name: 'Budget', type: 'string', jsonPath: '.spec.budget', description: 'Budget per period; empty is unlimited.' },
      { name: 'Spent', type: 'string', jsonPath: '.status.spent', description: 'Spent in the current period.' },
      { name: 'Remaining', type: 'string', jsonPath: '.status.remaining', description: 'Budget left in the current period.' },
      READY,
      AGE,
      { name: 'Period', type: 'string', jsonPath: '.spec.budgetPeriod', description: 'When spending resets.', priority: 1 },
      { name: 'Role', type: 'string', jsonPath: '.spec.role', description: 'admin or user.', priority: 1 },
      {
        name: 'Priority',
        type: 'integer',
        jsonPath: '.spec.priority',
        description: 'Queue order of its requests; higher first.',
        priority: 1,
      },
    ],
  },
  {
    kind: 'GatewayTeam',
    plural: 'gatewayteams',
    singular: 'gatewayteam',
    shortNames: ['gt'],
    description:
      "GatewayTeam is a team of GatewayUsers (those whose spec.teamRef names it): a budget, allowed routers and rate limits they share, besides each user's own.",
    spec: GatewayTeamSpec,
    status: GatewayTeamStatus,
    metadataName: UserObjectName,
    printerColumns: [
      { name: 'Budget', type: 'string', jsonPath: '.spec.budget', description: 'Budget per period; empty is unlimited.' },
      { name: 'Spent', type: 'string', jsonPath: '.status.spent', description: 'Spent in the current period by all its users.' },
      { name: 'Remaining', type: 'string', jsonPath: '.status.remaining', description: 'Budget left in the current period.' },
      { name: 'Members', type: 'integer', jsonPath: '.status.members', description: 'GatewayUsers in the team.' },
      READY,
      AGE,
    ],
  },
] as const satisfies readonly KindDefinition[];

export const CATEGORIES = ['tollgate'];

export function customResourceDefinition(definition: KindDefinition): JsonObject {
  const { kind, plural, singular, shortNames } = definition;
  const metadata: JsonObject = { type: 'object' };
  if (definition.metadataName) metadata.properties = { name: structuralSchema(definition.metadataName, 'metadata.name') };
  // A spec with a required field is required; one whose fields are all optional may be left
  // out, and the server then fills in its defaults as for `spec: {}`.
  let spec = structuralSchema(definition.spec, 'spec');
  const specRequired = Array.isArray(spec.required) && spec.required.length > 0;
  if (!specRequired) spec = ordered({ ...spec, default: {} });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind, listKind: `${kind}List`, plural, singular, shortNames: [...shortNames], categories: [...CATEGORIES] },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: definition.printerColumns.map((column) => ({ ...column })),
          schema: {
            openAPIV3Schema: {
              description: definition.description,
              type: 'object',
              ...(specRequired ? { required: ['spec'] } : {}),
              properties: {
                apiVersion: { description: `API version of the object: ${API_VERSION}.`, type: 'string' },
                kind: { description: `Kind of the object: ${kind}.`, type: 'string' },
                // Kubernetes allows no description here, and restrictions on name and generateName only.
                metadata,
                spec,
                status: structuralSchema(definition.status, 'status'),
              },
            },
          },
        },
      ],
    },
  };
}

export const CRD_HEADER =
  '# Generated by operator/generate-crds.ts from the zod schemas; do not edit.\n# Regenerate with `npm run generate:crds`.\n';

/** Each CRD file, by its path from the repository root, with its YAML text. */
export function crdFiles(): { path: string; text: string }[] {
  return KINDS.map((definition) => ({
    path: `crds/${definition.plural}.${GROUP}.yaml`,
    text: CRD_HEADER + dump(customResourceDefinition(definition), { lineWidth: -1, noRefs: true }),
  }));
}
