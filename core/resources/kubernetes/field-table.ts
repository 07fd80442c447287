// How a gateway resource's fields appear in its custom resource: one table per kind
// (router-fields.ts, provider-fields.ts, user-fields.ts) gives, field by field, the CR's name for it
// and the few ways the CR carries it differently. The CR's spec schema (field-schema.ts) and the
// translation both ways (field-walk.ts) are derived from that table and the resource's own zod
// schema, so a field is declared once, in the resource, and its bounds, enum and default with it.
import { z } from 'zod';

export type Path = (string | number)[];

/**
 * A rule across the fields of a nested object, written over the resource's names; `name` words a
 * field as the reader writes it (the CR's name), in the message and the path of an issue.
 */
export type CrossFieldRule = (value: Record<string, unknown>, ctx: z.RefinementCtx, name: (field: string) => string) => void;

/** A field the CR carries as the resource does, under the name `cr`, but for the exceptions given. */
export interface FieldRule {
  readonly kind?: 'field';
  readonly cr: string;
  /** The CR's own schema for the field, where the resource's cannot serve (money as a decimal string, ...). */
  readonly schema?: z.ZodType;
  /** The CR's description of the field, where it words it its own way ("Absent: ..." where the resource says null). */
  readonly describe?: string;
  /** The CR field is optional without a default: the API server would otherwise write the default into every object. */
  readonly optional?: true;
  /** The resource value the CR field is left out for when written: what the field reads as when absent. */
  readonly omitIf?: unknown;
  /** How the fields of a nested object (or of each object of an array) appear; absent: each as it is, camelCase. */
  readonly fields?: FieldTable;
  /** The nested object's rule across fields, worded with the CR's names (see crossField). */
  readonly refine?: CrossFieldRule;
}

/** A name that defaults to metadata.name (a router's called name, a user's display name): written only when it differs. */
export interface ObjectNameRule {
  readonly kind: 'object-name';
  readonly cr: string;
  readonly describe: string;
}

/** The id of another object of the namespace, which the CR names as `{ name }` (a user's team). */
export interface ReferenceRule {
  readonly kind: 'reference';
  readonly cr: string;
  readonly schema: z.ZodType;
}

/**
 * A field whose value the caller gives: on reading, the resource's (from metadata, or a reference it
 * resolved; none given: the field is left out); on writing, the CR's under `cr`, when the CR has
 * such a field. Problems with the value read are reported at `at`.
 */
export interface GivenRule {
  readonly kind: 'given';
  readonly cr?: string;
  readonly schema?: z.ZodType;
  readonly at?: Path;
}

/** A plain string is the CR's name of a field it carries as the resource does. */
export type Rule = string | FieldRule | ObjectNameRule | ReferenceRule | GivenRule;
export type ResolvedRule = FieldRule | ObjectNameRule | ReferenceRule | GivenRule;

/** The table of a resource of type T; the walkers take any resource's (T's default). */
export interface FieldTable<T = Record<string, unknown>> {
  /** The resource's field schemas, by name (of all its branches, for a union). */
  readonly shape: Readonly<Record<string, z.ZodType>>;
  /** A rule for each field, in the order of the CR's fields. */
  readonly rules: Rules<T>;
  /** Fields only the CR has, after the others; translation neither reads nor writes them. */
  readonly crOnly: Readonly<Record<string, z.ZodType>>;
}

/** Every field name of a type, of every member of a union. */
type FieldNames<T> = T extends unknown ? keyof T & string : never;

/** One rule per field of the resource, no more and no fewer: a field added to the resource is a compile error here until placed. */
export type Rules<T> = { readonly [K in FieldNames<T>]-?: Rule };

/** The table of a resource schema (an object, or a union of objects such as ProviderSpec). */
export function fieldTable<T>(schema: z.ZodType<T>, rules: NoInfer<Rules<T>>, crOnly: Record<string, z.ZodType> = {}): FieldTable<T> {
  const shape = shapeOf(schema);
  const unruled = Object.keys(shape).filter((name) => !(name in rules));
  const unknown = Object.keys(rules).filter((name) => !(name in shape));
  if (unruled.length > 0 || unknown.length > 0)
    throw new Error(`field table: no rule for ${unruled.join(', ') || '-'}; rules for no field: ${unknown.join(', ') || '-'}`);
  return { shape, rules, crOnly };
}

/** The rule in its object form. */
export function resolved(rule: Rule): ResolvedRule {
  return typeof rule === 'string' ? { cr: rule } : rule;
}

/** The CR's name of a resource field: its rule's, or its camelCase name when it has none. */
export function crName(table: FieldTable | undefined, field: string): string {
  const rule = table?.rules[field];
  return (rule === undefined ? undefined : resolved(rule).cr) ?? camelCase(field);
}

/**
 * The table of the nested object a field holds (itself, or as the items of an array): the rule's,
 * else one that carries each of its fields as it is, under its camelCase name. None for other fields.
 */
export function nestedTable(field: z.ZodType, rule: ResolvedRule): FieldTable | undefined {
  if (rule.kind !== undefined && rule.kind !== 'field') return undefined;
  if (rule.fields) return rule.fields;
  const object = nestedObject(field);
  return object && plainTable(object);
}

/** The object a field holds, under its optional, nullable and default wrappers and as the items of an array. */
function nestedObject(field: z.ZodType): z.ZodObject | undefined {
  const core = unwrapped(field);
  if (core instanceof z.ZodObject) return core;
  if (core instanceof z.ZodArray) return nestedObject(core.element as z.ZodType);
  return undefined;
}

/** The schema under its optional, nullable and default wrappers. */
export function unwrapped(field: z.ZodType): z.ZodType {
  if (field instanceof z.ZodOptional || field instanceof z.ZodNullable || field instanceof z.ZodDefault)
    return unwrapped(field.unwrap() as z.ZodType);
  return field;
}

const plainTables = new WeakMap<z.ZodObject, FieldTable>();
function plainTable(object: z.ZodObject): FieldTable {
  let table = plainTables.get(object);
  if (!table) {
    const shape = object.shape as Record<string, z.ZodType>;
    table = { shape, rules: Object.fromEntries(Object.keys(shape).map((name) => [name, camelCase(name)])), crOnly: {} };
    plainTables.set(object, table);
  }
  return table;
}

/**
 * A typed rule across fields as a table's CrossFieldRule. The cast holds: the value it is given is
 * the CR object renamed to the resource's names, whose fields are the resource's own schemas, and
 * zod runs an object's rule only once each field has its type.
 */
export function crossField<T>(rule: (value: T, ctx: z.RefinementCtx, name: (field: string) => string) => void): CrossFieldRule {
  return (value, ctx, name) => rule(value as T, ctx, name);
}

export function camelCase<T extends string | number>(segment: T): T {
  return (typeof segment === 'string' ? segment.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : segment) as T;
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  if (schema instanceof z.ZodObject) return schema.shape as Record<string, z.ZodType>;
  if (schema instanceof z.ZodUnion) {
    const shape: Record<string, z.ZodType> = {};
    for (const option of schema.options as z.ZodType[]) for (const [name, field] of Object.entries(shapeOf(option))) shape[name] ??= field;
    return shape;
  }
  throw new Error('field table: the resource schema must be an object or a union of objects');
}
