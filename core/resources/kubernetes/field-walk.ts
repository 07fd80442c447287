// Translation between a gateway resource and its custom resource's spec, by walking the kind's
// field table (field-table.ts): each field under its other name, nested objects and arrays of
// objects by the same rule, and the table's exceptions (a name defaulting to metadata.name, a
// reference written `{ name }`, values the caller gives). Also the way back for a problem: the
// path in the CR of a problem found on the resource. Pure: values in, values out.
import { isDeepStrictEqual } from 'node:util';
import { camelCase, crName, nestedTable, resolved, type FieldTable, type Path, type ResolvedRule } from './field-table.ts';

export interface WalkContext {
  /** metadata.name of the object, what a name absent from the CR stands for. */
  readonly objectName: string;
  /** The values of the table's given fields: the resource's by field name when reading, the CR's by CR name when writing. */
  readonly given: Readonly<Record<string, unknown>>;
}

/** Nested objects have no names of their own and nothing given. */
const NESTED: WalkContext = { objectName: '', given: {} };

/** The resource's fields from a CR's (parsed) spec, absent ones left out for the resource's schema to default. */
export function readFields(
  table: FieldTable,
  cr: Readonly<Record<string, unknown>>,
  context: WalkContext = NESTED,
): Record<string, unknown> {
  const resource: Record<string, unknown> = {};
  for (const [field, rule] of Object.entries(table.rules)) {
    const value = readField(table, field, resolved(rule), cr, context);
    if (value !== undefined) resource[field] = value;
  }
  return resource;
}

function readField(
  table: FieldTable,
  field: string,
  rule: ResolvedRule,
  cr: Readonly<Record<string, unknown>>,
  context: WalkContext,
): unknown {
  switch (rule.kind) {
    case 'object-name':
      return cr[rule.cr] ?? context.objectName;
    case 'reference': {
      const reference = cr[rule.cr];
      return isObject(reference) ? reference.name : undefined;
    }
    case 'given':
      return context.given[field];
    default:
      return readValue(nestedTable(table.shape[field]!, rule), cr[rule.cr]);
  }
}

/** A field's value read from the CR: an object, or each object of an array, by its nested table. */
function readValue(table: FieldTable | undefined, value: unknown): unknown {
  if (table === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => readValue(table, item));
  return isObject(value) ? readFields(table, value) : value;
}

/**
 * A CR's spec from the resource's fields, in the order of the CR's fields. Kubernetes has no null:
 * a null field is left out, as is one equal to the value it reads back as (the rule's omitIf).
 */
export function writeFields(
  table: FieldTable,
  resource: Readonly<Record<string, unknown>>,
  context: WalkContext = NESTED,
): Record<string, unknown> {
  const cr: Record<string, unknown> = {};
  for (const [field, rule] of Object.entries(table.rules)) {
    const resolvedRule = resolved(rule);
    const value = writeField(table, field, resolvedRule, resource[field], context);
    if (value !== undefined && resolvedRule.cr !== undefined) cr[resolvedRule.cr] = value;
  }
  return cr;
}

function writeField(table: FieldTable, field: string, rule: ResolvedRule, value: unknown, context: WalkContext): unknown {
  switch (rule.kind) {
    case 'object-name':
      return value === context.objectName || value === null ? undefined : value;
    case 'reference':
      return value === null || value === undefined ? undefined : { name: value };
    case 'given':
      return rule.cr === undefined ? undefined : context.given[rule.cr];
    default:
      if (value === null || value === undefined) return undefined;
      if (rule.omitIf !== undefined && isDeepStrictEqual(value, rule.omitIf)) return undefined;
      return writeValue(nestedTable(table.shape[field]!, rule), value);
  }
}

/** A field's value as the CR writes it: an object, or each object of an array, by its nested table. */
export function writeValue(table: FieldTable | undefined, value: unknown): unknown {
  if (table === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => writeValue(table, item));
  return isObject(value) ? writeFields(table, value) : value;
}

/**
 * Where in the CR a problem found at `path` of the resource is: the CR's names all the way down,
 * metadata.name for a name the spec left out, the given fields where the table says. `cr` is the
 * parsed spec the resource was read from.
 */
export function crPath(table: FieldTable, path: Path, cr: Readonly<Record<string, unknown>>): Path {
  const [first, ...rest] = path;
  if (typeof first !== 'string') return ['spec', ...path];
  const rule = table.rules[first];
  if (rule === undefined) return ['spec', camelCase(first), ...rest.map(camelCase)];
  const resolvedRule = resolved(rule);
  switch (resolvedRule.kind) {
    case 'object-name':
      return [...(cr[resolvedRule.cr] === undefined ? ['metadata', 'name'] : ['spec', resolvedRule.cr]), ...rest];
    case 'reference':
      return ['spec', resolvedRule.cr, 'name', ...rest];
    case 'given':
      return [...(resolvedRule.at ?? ['spec', resolvedRule.cr ?? camelCase(first)]), ...rest];
    default:
      return ['spec', resolvedRule.cr, ...nestedPath(nestedTable(table.shape[first]!, resolvedRule), rest)];
  }
}

/** A path inside a nested object (or array of objects), in the CR's names. */
function nestedPath(table: FieldTable | undefined, path: Path): Path {
  const [first, ...rest] = path;
  if (first === undefined) return [];
  if (typeof first === 'number') return [first, ...nestedPath(table, rest)];
  const rule = table?.rules[first];
  if (table === undefined || rule === undefined) return [camelCase(first), ...rest.map(camelCase)];
  return [crName(table, first), ...nestedPath(nestedTable(table.shape[first]!, resolved(rule)), rest)];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
