// The four CustomResourceDefinitions (apiextensions.k8s.io/v1), built from the zod schemas of
// crd-schemas.ts. zod writes an OpenAPI 3.0 schema; structuralSchema() turns it into the
// *structural* schema Kubernetes requires (every node typed, no unions, no references, no
// additionalProperties beside properties), and throws, naming the field, on anything that has no
// structural form rather than dropping it silently. operator/generate-crds.ts writes the result
// to crds/; a unit test checks the committed files still equal what this produces.
import { z } from 'zod';
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
  UserObjectName,
  VERSION,
} from './crd-schemas.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

// ---------------------------------------------------------------------------------------------
// zod -> structural OpenAPI v3

/** The keywords a CRD schema may carry, in the order they are written out. */
const KEYWORDS = [
  'description',
  'type',
  'format',
  'enum',
  'default',
  'nullable',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'required',
  'items',
  'properties',
  'additionalProperties',
] as const;
const KEYWORD_SET = new Set<string>(KEYWORDS);

/** JSON Schema bookkeeping with no meaning for Kubernetes. */
const BOOKKEEPING = new Set(['$schema', '$id', 'id', '$defs', 'definitions', 'title', 'examples']);

/** Formats the API server knows (it ignores others; int32/int64 document integers). */
const FORMATS = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'date-time',
  'int32',
  'int64',
]);
/** Formats the API server checks itself: the regex zod writes beside them is redundant and JS-flavoured. */
const CHECKED_FORMATS = new Set(['date', 'date-time', 'duration']);

export class StructuralSchemaError extends Error {
  override name = 'StructuralSchemaError';
}

/** The structural OpenAPI v3 schema of a zod schema, as its input (what a user writes). */
export function structuralSchema(schema: z.ZodType, path: string): JsonObject {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0', unrepresentable: 'throw' }) as JsonObject;
  return toStructural(json, { root: json, path, refs: [] });
}

interface Walk {
  root: JsonObject;
  path: string;
  /** $refs being expanded above this node, to refuse a recursive schema. */
  refs: string[];
}

function toStructural(input: JsonObject, walk: Walk): JsonObject {
  const fail = (message: string): never => {
    throw new StructuralSchemaError(`${walk.path}: ${message}`);
  };
  const { node, refs } = expandRefs(input, walk, fail);
  const here = { ...walk, refs };
  const flat = collapseUnions(node, here, fail);

  const out: JsonObject = {};
  for (const [key, value] of Object.entries(flat)) {
    if (BOOKKEEPING.has(key)) continue;
    if (key === 'x-kubernetes-validations')
      fail('CEL rules (x-kubernetes-validations) need Kubernetes 1.25; the API server we support (1.20) refuses them');
    if (key === 'const') {
      out.enum = [value];
      continue;
    }
    if (!KEYWORD_SET.has(key)) fail(`the keyword "${key}" has no place in a structural schema`);
    out[key] = value;
  }

  normaliseType(out, fail);
  normaliseBounds(out);
  if (out.format !== undefined) {
    if (typeof out.format !== 'string' || !FORMATS.has(out.format))
      fail(`format ${JSON.stringify(out.format)} is not one Kubernetes knows`);
    if (CHECKED_FORMATS.has(out.format as string)) delete out.pattern;
  }
  if (out.type === undefined) fail('every node of a structural schema needs a type');

  if (out.properties !== undefined) {
    const properties: JsonObject = {};
    for (const [name, child] of Object.entries(asObject(out.properties, fail))) {
      properties[name] = toStructural(asObject(child, fail), { ...here, path: `${walk.path}.${name}` });
    }
    out.properties = properties;
  }
  if (out.additionalProperties === false || out.additionalProperties === true) {
    // Pruning already drops unknown fields; `false` beside properties is not allowed.
    delete out.additionalProperties;
  } else if (out.additionalProperties !== undefined) {
    if (out.properties !== undefined) fail('properties and additionalProperties cannot both be given (a struct or a map, not both)');
    out.additionalProperties = toStructural(asObject(out.additionalProperties, fail), { ...here, path: `${walk.path}[*]` });
  }
  if (out.items !== undefined) {
    if (Array.isArray(out.items)) fail('tuple items (an array of schemas) have no structural form');
    out.items = toStructural(asObject(out.items, fail), { ...here, path: `${walk.path}[]` });
  }
  return ordered(out);
}

/** Replaces a local $ref by what it points at; the node's own keys (a description) win. */
function expandRefs(node: JsonObject, walk: Walk, fail: (message: string) => never): { node: JsonObject; refs: string[] } {
  let current = node;
  let refs = walk.refs;
  while (typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (refs.includes(ref)) fail(`the schema refers to itself (${ref}); a recursive type has no structural form`);
    if (!ref.startsWith('#/')) fail(`only local references can be inlined, not ${ref}`);
    let target: Json = walk.root;
    for (const part of ref
      .slice(2)
      .split('/')
      .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))) {
      target = target !== null && typeof target === 'object' && !Array.isArray(target) ? (target[part] ?? null) : null;
    }
    const { $ref: _ref, ...siblings } = current;
    current = { ...asObject(target, fail), ...siblings };
    refs = [...refs, ref];
  }
  return { node: current, refs };
}

/**
 * allOf of one branch is that branch. anyOf/oneOf: a union with null becomes the other branch, nullable; a union of enums of one
 * type becomes one enum. Any other union has no structural form and is refused.
 */
function collapseUnions(node: JsonObject, walk: Walk, fail: (message: string) => never): JsonObject {
  if (node.not !== undefined) fail('not has no structural form');
  if (node.allOf !== undefined) {
    // zod wraps a reference in a one-branch allOf to give it its own description.
    const { allOf, ...rest } = node;
    if (!Array.isArray(allOf) || allOf.length !== 1)
      fail('allOf (an intersection) has no structural form; declare one object with all the fields');
    const [only] = allOf as Json[];
    return collapseUnions({ ...expandRefs(asObject(only, fail), walk, fail).node, ...rest }, walk, fail);
  }
  const key = node.anyOf !== undefined ? 'anyOf' : node.oneOf !== undefined ? 'oneOf' : undefined;
  if (key === undefined) return node;
  if (node.anyOf !== undefined && node.oneOf !== undefined) fail('anyOf together with oneOf has no structural form');
  const { [key]: rawBranches, ...rest } = node;
  const branches = (Array.isArray(rawBranches) ? rawBranches : []).map((b) => expandRefs(asObject(b, fail), walk, fail).node);
  const isNull = (b: JsonObject) => b.type === 'null' || (Array.isArray(b.enum) && b.enum.length === 1 && b.enum[0] === null);
  const others = branches.filter((b) => !isNull(b));
  const nullable: JsonObject = others.length < branches.length ? { nullable: true } : {};
  if (others.length === 1) return collapseUnions({ ...others[0], ...rest, ...nullable }, walk, fail);
  const enumOnly = others.every((b) => Object.keys(b).every((k) => ['type', 'enum', 'const', 'description'].includes(k)));
  const types = new Set(others.map((b) => b.type));
  if (others.length > 1 && enumOnly && types.size === 1) {
    const values = others.flatMap((b) => (b.const !== undefined ? [b.const] : Array.isArray(b.enum) ? b.enum : []));
    return { type: others[0]!.type ?? null, enum: values, ...rest, ...nullable };
  }
  return fail(`a union of ${others.map((b) => JSON.stringify(b.type ?? b)).join(' and ')} has no structural form; give the field one type`);
}

/** `type: [T, "null"]` becomes `type: T, nullable: true`; a type list of two real types is refused. */
function normaliseType(node: JsonObject, fail: (message: string) => never): void {
  if (!Array.isArray(node.type)) {
    if (node.type === 'null') fail('type null has no structural form');
    return;
  }
  const types = node.type.filter((t) => t !== 'null');
  if (types.length !== 1) fail(`the types ${JSON.stringify(node.type)} have no structural form; give the field one type`);
  if (types.length < node.type.length) node.nullable = true;
  node.type = types[0]!;
}

/** JSON Schema 2019+ numeric exclusive bounds become OpenAPI 3.0's boolean form. */
function normaliseBounds(node: JsonObject): void {
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof node[exclusive] === 'number') {
      node[bound] = node[exclusive];
      node[exclusive] = true;
    }
  }
}

function ordered(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of KEYWORDS) if (node[key] !== undefined) out[key] = node[key];
  return out;
}

function asObject(value: Json | undefined, fail: (message: string) => never): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return fail('expected a schema object');
  return value;
}

// ---------------------------------------------------------------------------------------------
// The CustomResourceDefinitions

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
