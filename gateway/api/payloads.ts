// Reading the admin and account APIs' payloads: bodies and query strings are validated by the
// resources' own zod schemas, and the first problems are reported as a 400 whose `param` is the
// offending field's path. Partial updates follow JSON Merge Patch (RFC 7396).
import { z } from 'zod';
import { formatPath } from '../../core/resources/consistency.ts';
import { errors } from './api-error.ts';

type Json = Record<string, unknown>;

/** How many problems one 400 lists in its message (the first one is also in `param`). */
const MAX_LISTED_PROBLEMS = 3;

export function isPlainObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The request body, which must be a JSON object. */
export function bodyObject(body: unknown): Json {
  if (!isPlainObject(body)) throw errors.invalidRequest('The request body must be a JSON object');
  return body;
}

/** Parses `value` with `schema`, or throws a 400 naming the field(s) at fault. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, pathPrefix: readonly PropertyKey[] = []): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => describeIssue(issue, value, pathPrefix));
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => p.text);
  if (problems.length > MAX_LISTED_PROBLEMS) listed.push(`and ${problems.length - MAX_LISTED_PROBLEMS} more`);
  throw errors.invalidRequest(listed.join('; '), problems[0]?.param || null);
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown, prefix: readonly PropertyKey[]): { param: string; text: string } {
  if (issue.code === 'unrecognized_keys') {
    const param = formatPath([...prefix, ...issue.path, issue.keys[0]!]);
    const names = issue.keys.map((k) => `"${k}"`).join(', ');
    return { param, text: `${param}: unknown field${issue.keys.length > 1 ? `s ${names}` : ''}` };
  }
  const param = formatPath([...prefix, ...issue.path]);
  // zod says "expected string, received undefined"; an absent field is simply required.
  const missing = issue.code !== 'custom' && valueAt(input, issue.path) === undefined;
  const message = !missing ? issue.message : issue.code === 'invalid_type' ? 'is required' : `is required (${issue.message})`;
  return { param, text: param ? `${param}: ${message}` : message };
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/**
 * JSON Merge Patch (RFC 7396): objects merge key by key, `null` removes a key (so the schema's
 * default applies), anything else (arrays included) replaces. Applied to `{}` it drops the nulls
 * of a creation payload, so null means "not set" there too.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const merged = new Map<string, unknown>(isPlainObject(target) ? Object.entries(target) : []);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, mergePatch(merged.get(key), value));
  }
  // fromEntries defines own properties: a "__proto__" key stays a plain (and unknown) field.
  return Object.fromEntries(merged);
}

/** A PATCH must not rename: the identifying field, if given, must equal the target's. */
export function assertSameIdentity(patch: Json, field: string, current: string, what: string): void {
  if (field in patch && patch[field] !== current) {
    throw errors.invalidRequest(`${field}: a ${what}'s ${field} cannot be changed (create a new ${what} and delete this one)`, field);
  }
}

/** The identifying field of `PATCH /collection` (no id in the path), which must be a string. */
export function identityIn(patch: Json, field: string): string {
  const value = patch[field];
  if (typeof value !== 'string' || value === '') throw errors.invalidRequest(`${field}: is required (it names what to update)`, field);
  return value;
}

/** `limit` of a paginated list: 1 to 500, 50 when absent. */
export const PageLimit = z
  .string()
  .regex(/^\d+$/, 'must be a whole number')
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be at least 1').max(500, 'must be at most 500'))
  .default(50);
