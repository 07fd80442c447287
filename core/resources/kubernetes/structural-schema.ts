// The zod -> structural OpenAPI v3 conversion the CustomResourceDefinitions are built with (crds.ts).
// zod writes an OpenAPI 3.0 schema; structuralSchema() turns it into the *structural* schema
// Kubernetes requires (every node typed, no unions, no references, no additionalProperties beside
// properties), and throws, naming the field, on anything that has no structural form rather than
// dropping it silently. Apart from the CRDs' table of kinds so that each reads on its own.
import { z } from 'zod';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

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
  'x-kubernetes-int-or-string',
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
  if (out.type === undefined && out['x-kubernetes-int-or-string'] !== true) fail('every node of a structural schema needs a type');

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
 * type becomes one enum; an integer or a string is x-kubernetes-int-or-string. Any other union has no structural form and is refused.
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
  // A number or a name (a Service port): Kubernetes' own int-or-string, checked further by the operator.
  const kinds = others.map((b) => b.type).toSorted();
  if (others.length === 2 && kinds[0] === 'integer' && kinds[1] === 'string')
    return { 'x-kubernetes-int-or-string': true, ...rest, ...nullable };
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

/** The node with its keywords in the order they are written out. */
export function ordered(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of KEYWORDS) if (node[key] !== undefined) out[key] = node[key];
  return out;
}

function asObject(value: Json | undefined, fail: (message: string) => never): JsonObject {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return fail('expected a schema object');
  return value;
}
