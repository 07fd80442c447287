// A custom resource's spec schema, derived from its kind's field table (field-table.ts) and the
// resource's own schema: each field as the resource declares it (its bounds, enum, default and
// description), under the CR's name, nested objects renamed by the same rule, and changed only
// where the table says. Kubernetes has no null, so a field the resource allows to be null is
// optional here, and absent reads as null. crd-schemas.ts builds the four specs with crObject().
import { z } from 'zod';
import {
  crName,
  nestedTable,
  resolved,
  unwrapped,
  type CrossFieldRule,
  type FieldRule,
  type FieldTable,
  type ResolvedRule,
} from './field-table.ts';
import { readFields, writeValue } from './field-walk.ts';

/** The strict object of the CR's fields, in the table's order, then the CR-only ones; `refine` is its rule across fields. */
export function crObject(table: FieldTable, refine?: CrossFieldRule): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [field, rule] of Object.entries(table.rules)) {
    const resolvedRule = resolved(rule);
    const schema = crField(table.shape[field]!, resolvedRule);
    if (schema !== undefined && resolvedRule.cr !== undefined) shape[resolvedRule.cr] = schema;
  }
  const object = z.strictObject({ ...shape, ...table.crOnly });
  if (!refine) return object;
  return object.superRefine((value, ctx) => refine(readFields(table, value), ctx, (field) => crName(table, field)));
}

/** The CR's schema of one resource field (none for a given field the CR does not carry). */
function crField(field: z.ZodType, rule: ResolvedRule): z.ZodType | undefined {
  switch (rule.kind) {
    case 'object-name':
      return field.optional().describe(rule.describe);
    case 'reference':
    case 'given':
      return rule.schema;
    default:
      return rule.schema ?? derived(field, rule);
  }
}

/** The resource's field schema, its nested object converted, optional where the CR has no default or null. */
function derived(field: z.ZodType, rule: FieldRule): z.ZodType {
  const core = unwrapped(field);
  const converted = convertedCore(core, rule);
  const layers = wrappers(field);
  let schema: z.ZodType;
  if (rule.optional || layers.some((layer) => layer instanceof z.ZodNullable)) {
    // The wrappers go, their descriptions stay (the outer one wins, as it does in the resource).
    schema = withMeta(converted.optional(), Object.assign({}, ...layers.toReversed().map((layer) => z.globalRegistry.get(layer))));
  } else if (converted === core) {
    schema = field;
  } else {
    schema = converted;
    for (const layer of layers.toReversed()) {
      // A nested object's default is the resource's, as the CR writes it.
      schema =
        layer instanceof z.ZodDefault ? schema.default(writeValue(nestedTable(core, rule), layer.def.defaultValue)) : schema.optional();
      schema = withMeta(schema, z.globalRegistry.get(layer));
    }
  }
  return rule.describe === undefined ? schema : schema.describe(rule.describe);
}

/** A nested object in the CR's names (or an array of them, with the array's bounds); any other schema as it is. */
function convertedCore(core: z.ZodType, rule: FieldRule): z.ZodType {
  const table = nestedTable(core, rule);
  if (table === undefined) return core;
  if (core instanceof z.ZodObject) return withMeta(crObject(table, rule.refine), z.globalRegistry.get(core));
  if (core instanceof z.ZodArray) {
    const element = derived(core.element as z.ZodType, { cr: '', fields: table, ...(rule.refine ? { refine: rule.refine } : {}) });
    return withMeta(core.clone({ ...core.def, element }), z.globalRegistry.get(core));
  }
  throw new Error(`field table: fields are given for "${rule.cr}", which holds no object`);
}

/** The optional, nullable and default wrappers of a schema, outermost first. */
function wrappers(field: z.ZodType): z.ZodType[] {
  if (field instanceof z.ZodOptional || field instanceof z.ZodNullable || field instanceof z.ZodDefault)
    return [field, ...wrappers(field.unwrap() as z.ZodType)];
  return [];
}

function withMeta(schema: z.ZodType, meta: z.core.GlobalMeta | undefined): z.ZodType {
  return meta === undefined || Object.keys(meta).length === 0 ? schema : schema.meta(meta);
}
