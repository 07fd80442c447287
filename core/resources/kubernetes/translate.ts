// Between a custom resource (metadata and spec, as read from the API server) and the gateway's own
// resource, both ways, by the kind's field table (router-fields.ts, provider-fields.ts,
// user-fields.ts; walked by field-walk.ts). Pure: no API calls, no clock. Two layers of checks,
// each reported at a path of the custom resource so the operator can set Accepted=False with a
// message that names the field:
//   1. the CR's spec against its zod schema (crd-schemas.ts), which the API server also enforces
//      but an object stored under an older CRD may not satisfy;
//   2. the gateway resource built from it (RouterSpec, ProviderSpec, UserSpec, TeamSpec), for the
//      rules a structural schema cannot express (a url some provider types require, metadata.name as id).
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { ResourceId } from '../fields.ts';
import { RouterSpec } from '../router.ts';
import { ProviderSpec } from '../provider.ts';
import { UserSpec } from '../user.ts';
import { TeamSpec } from '../team.ts';
import { formatPath } from '../consistency.ts';
import { GatewayTeamSpec, GatewayUserSpec, ModelProviderSpec, ModelRouterSpec } from './crd-schemas.ts';
import type { FieldTable, Path } from './field-table.ts';
import { crPath, readFields, writeFields, type WalkContext } from './field-walk.ts';
import { PROVIDER_FIELDS } from './provider-fields.ts';
import { ROUTER_FIELDS } from './router-fields.ts';
import { TEAM_FIELDS, USER_FIELDS } from './user-fields.ts';

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

/** A custom resource's spec, in the shape its kind's schema in crd-schemas.ts checks. */
export type CrSpec = Record<string, unknown>;

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
// Custom resources -> gateway resources

export function routerFromCR(cr: CustomResource): Translation<RouterSpec> {
  const spec = parseSpec(ModelRouterSpec, cr);
  if (!spec.ok) return spec;
  return fromCR(RouterSpec, ROUTER_FIELDS, spec.value, { objectName: cr.metadata.name, given: {} });
}

/**
 * `routerName` is the name clients call of the ModelRouter that spec.routerRef names (its
 * spec.name or metadata.name), which the caller resolved. The API key is left out: keys travel
 * apart from resources.
 */
export function providerFromCR(cr: CustomResource, routerName: string): Translation<ProviderSpec> {
  const spec = parseSpec(ModelProviderSpec, cr);
  if (!spec.ok) return spec;
  const { namespace } = cr.metadata;
  if (!namespace)
    return { ok: false, problems: [{ path: ['metadata', 'namespace'], message: 'is required: a ModelProvider lives in a namespace' }] };
  const serviceRef = spec.value.serviceRef;
  const given = {
    id: providerId(namespace, cr.metadata.name),
    router: routerName,
    // The Service lives beside the ModelProvider: the snapshot says where, for the gateways.
    service_ref: isRecord(serviceRef) ? { ...serviceRef, namespace } : serviceRef,
  };
  return fromCR(
    ProviderSpec,
    PROVIDER_FIELDS,
    spec.value,
    { objectName: cr.metadata.name, given },
    ` for type "${String(spec.value.type)}"`,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

export function userFromCR(cr: CustomResource): Translation<UserSpec> {
  const spec = parseSpec(GatewayUserSpec, cr);
  if (!spec.ok) return spec;
  return fromCR(UserSpec, USER_FIELDS, spec.value, { objectName: cr.metadata.name, given: { id: cr.metadata.name } });
}

export function teamFromCR(cr: CustomResource): Translation<TeamSpec> {
  const spec = parseSpec(GatewayTeamSpec, cr);
  if (!spec.ok) return spec;
  return fromCR(TeamSpec, TEAM_FIELDS, spec.value, { objectName: cr.metadata.name, given: { id: cr.metadata.name } });
}

/** Layer 1: the spec against its kind's schema; its paths are already the CR's, under spec. */
function parseSpec(schema: z.ZodType<CrSpec>, cr: CustomResource): Translation<CrSpec> {
  const parsed = schema.safeParse(cr.spec ?? {});
  return parsed.success ? { ok: true, value: parsed.data } : specProblems(parsed.error, cr.spec);
}

/** Layer 2: the gateway resource read from the spec, each problem moved back to the CR field it came from. */
function fromCR<S extends z.ZodType>(
  schema: S,
  table: FieldTable,
  spec: CrSpec,
  context: WalkContext,
  forType = '',
): Translation<z.output<S>> {
  return build(schema, readFields(table, spec, context), (path) => crPath(table, path, spec), forType);
}

/** The problems of a spec its schema refused, at their paths under spec: a missing field is "required", an unknown one "not a field". */
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

/**
 * The gateway resource from its input, each problem at `toCR` of its path; `forType` (` for type
 * "vllm"`) is appended to "is required" and "is not used".
 */
function build<S extends z.ZodType>(
  schema: S,
  input: Record<string, unknown>,
  toCR: (path: Path) => Path,
  forType: string,
): Translation<z.output<S>> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
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

function valueAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
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

export function routerToCR(spec: RouterSpec, objectName: string): CrSpec {
  return writeFields(ROUTER_FIELDS, spec, { objectName, given: {} });
}

/** The key is not in the spec: `apiKeySecretRef` names where it is. */
export function providerToCR(spec: ProviderSpec, routerObject: string, apiKeySecretRef?: { name: string; key: string }): CrSpec {
  const serviceRef = spec.type === 'vllm' || spec.type === 'tei' ? spec.service_ref : undefined;
  // A ModelProvider's Service is in its own namespace, so the CR names none.
  const { namespace: _namespace, ...sameNamespace } = serviceRef ?? {};
  return writeFields(PROVIDER_FIELDS, spec, {
    objectName: '',
    given: { routerRef: { name: routerObject }, apiKeySecretRef, serviceRef: serviceRef ? sameNamespace : undefined },
  });
}

/** metadata.name is the user id; the operator writes the user's API key (spec.apiKeySecret unset). */
export function userToCR(spec: UserSpec): CrSpec {
  return writeFields(USER_FIELDS, spec, { objectName: spec.id, given: {} });
}

/** metadata.name is the team id. */
export function teamToCR(spec: TeamSpec): CrSpec {
  return writeFields(TEAM_FIELDS, spec, { objectName: spec.id, given: {} });
}
