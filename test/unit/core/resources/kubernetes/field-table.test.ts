// The field tables a custom resource's spec is derived from (core/resources/kubernetes/field-table.ts):
// a field added to a resource appears in its CR, camelCase, with the resource's bounds, default
// and description, and goes there and back; nested objects and arrays of objects follow the same
// rule without a line of their own; a null of the resource is an absent CR field; and the problems
// found on the resource are reported at the CR's names.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { fieldTable, type FieldTable } from '../../../../../core/resources/kubernetes/field-table.ts';
import { crObject } from '../../../../../core/resources/kubernetes/field-schema.ts';
import { crPath, readFields, writeFields, type WalkContext } from '../../../../../core/resources/kubernetes/field-walk.ts';
import { ROUTER_FIELDS } from '../../../../../core/resources/kubernetes/router-fields.ts';
import { TEAM_FIELDS } from '../../../../../core/resources/kubernetes/user-fields.ts';
import { structuralSchema, type JsonObject } from '../../../../../core/resources/kubernetes/structural-schema.ts';
import { RouterQueue, RouterSpec } from '../../../../../core/resources/router.ts';
import { TeamSpec } from '../../../../../core/resources/team.ts';

const context: WalkContext = { objectName: 'chat', given: {} };

/** The structural schema of the CR field at `path` (spec.queue.maxWaitSeconds -> ['queue', 'maxWaitSeconds']). */
function crdField(table: FieldTable, ...path: string[]): JsonObject | undefined {
  let node: JsonObject | undefined = structuralSchema(crObject(table), 'spec');
  for (const name of path) {
    const next: JsonObject | undefined = node?.items as JsonObject | undefined;
    node = ((next ?? node)?.properties as Record<string, JsonObject> | undefined)?.[name];
  }
  return node;
}

/** The resource written to the CR, checked by the CR's schema, read back and parsed by the resource's. */
function roundTrip<S extends z.ZodType>(schema: S, table: FieldTable, resource: z.output<S>) {
  const cr = writeFields(table, resource as Record<string, unknown>, context);
  const parsed = crObject(table).parse(cr);
  return { cr, back: schema.parse(readFields(table, parsed, context)) };
}

describe('a field added to a resource', () => {
  const WarmRouter = RouterSpec.extend({
    warm_up_seconds: z.number().int().min(0).max(600).default(30).describe('Seconds a new provider is eased in.'),
  });
  const table = fieldTable(WarmRouter, { ...ROUTER_FIELDS.rules, warm_up_seconds: 'warmUpSeconds' });

  test('appears in the CR under its camelCase name, with the bounds, default and description of the resource', () => {
    assert.deepEqual(crdField(table, 'warmUpSeconds'), {
      description: 'Seconds a new provider is eased in.',
      type: 'integer',
      default: 30,
      minimum: 0,
      maximum: 600,
    });
    assert.equal(Object.keys(crObject(table).shape).at(-1), 'warmUpSeconds', 'after the fields the table places before it');
  });

  test('goes to the CR and back', () => {
    const router = WarmRouter.parse({ name: 'chat', type: 'text-generation', warm_up_seconds: 5 });
    const { cr, back } = roundTrip(WarmRouter, table, router);
    assert.equal(cr.warmUpSeconds, 5);
    assert.deepEqual(back, router);
  });

  test('is refused at its CR name: by the CR schema, and on the resource', () => {
    const parsed = crObject(table).safeParse({ type: 'text-generation', warmUpSeconds: 601 });
    assert.deepEqual(
      parsed.error?.issues.map((issue) => issue.path),
      [['warmUpSeconds']],
    );
    assert.deepEqual(crPath(table, ['warm_up_seconds'], {}), ['spec', 'warmUpSeconds']);
  });

  test('needs a rule: a table without one does not compile, and throws if forced', () => {
    assert.throws(
      () =>
        // @ts-expect-error warm_up_seconds has no rule
        fieldTable(WarmRouter, ROUTER_FIELDS.rules),
      /no rule for warm_up_seconds; rules for no field: -/,
    );
    assert.throws(
      // @ts-expect-error the router has no field warm_up_seconds
      () => fieldTable(RouterSpec, { ...ROUTER_FIELDS.rules, warm_up_seconds: 'warmUpSeconds' }),
      /no rule for -; rules for no field: warm_up_seconds/,
    );
  });
});

describe('a field added to a nested object', () => {
  const QueueRouter = RouterSpec.extend({
    queue: RouterQueue.extend({
      max_age_seconds: z.number().positive().max(3600).optional().describe('Oldest a waiting request may be.'),
    }).optional(),
  });
  // The router's own rules: `queue: 'queue'` carries the nested object field by field.
  const table = fieldTable(QueueRouter, ROUTER_FIELDS.rules);

  test('appears in the CR without a rule of its own, camelCase, beside the fields it had', () => {
    assert.deepEqual(Object.keys((crdField(table, 'queue')?.properties as JsonObject) ?? {}), [
      'maxWaitSeconds',
      'maxWaiting',
      'whenRedisDown',
      'maxAgeSeconds',
    ]);
    assert.deepEqual(crdField(table, 'queue', 'maxAgeSeconds'), {
      description: 'Oldest a waiting request may be.',
      type: 'number',
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 3600,
    });
  });

  test('goes to the CR and back, and its problems are reported at the CR names', () => {
    const router = QueueRouter.parse({ name: 'chat', type: 'text-generation', queue: { max_waiting: 3, max_age_seconds: 20 } });
    const { cr, back } = roundTrip(QueueRouter, table, router);
    assert.deepEqual(cr.queue, { maxWaiting: 3, maxAgeSeconds: 20 });
    assert.deepEqual(back, router);
    assert.deepEqual(crPath(table, ['queue', 'max_age_seconds'], {}), ['spec', 'queue', 'maxAgeSeconds']);
  });
});

describe('arrays of objects and nulls', () => {
  const Pipeline = z.strictObject({
    id: z.string().describe('Id.'),
    steps: z
      .array(
        z.strictObject({
          wait_seconds: z.number().int().min(0).max(60).describe('Wait.'),
          next_step: z.string().optional().describe('Next.'),
        }),
      )
      .max(4)
      .default([])
      .describe('Steps.'),
    max_cost: z.number().nullable().default(null).describe('Most it may cost; null for no limit.'),
  });
  const table = fieldTable(Pipeline, { id: { kind: 'given', at: ['metadata', 'name'] }, steps: 'steps', max_cost: 'maxCost' });

  test("each item of an array is renamed by the same rule; the array keeps its bounds and the resource's default", () => {
    assert.deepEqual(crdField(table, 'steps'), {
      description: 'Steps.',
      type: 'array',
      default: [],
      maxItems: 4,
      items: {
        type: 'object',
        required: ['waitSeconds'],
        properties: {
          waitSeconds: { description: 'Wait.', type: 'integer', minimum: 0, maximum: 60 },
          nextStep: { description: 'Next.', type: 'string' },
        },
      },
    });
    assert.deepEqual(crPath(table, ['steps', 1, 'wait_seconds'], {}), ['spec', 'steps', 1, 'waitSeconds']);
  });

  test('a nullable field is optional in the CR (Kubernetes has no null): null is written as absent, and absent reads as null', () => {
    assert.deepEqual(crdField(table, 'maxCost'), { description: 'Most it may cost; null for no limit.', type: 'number' });
    const pipeline = Pipeline.parse({ id: 'p', steps: [{ wait_seconds: 2 }, { wait_seconds: 3, next_step: 'end' }] });
    const cr = writeFields(table, pipeline, context);
    assert.deepEqual(cr, { steps: [{ waitSeconds: 2 }, { waitSeconds: 3, nextStep: 'end' }] });
    const read = readFields(table, crObject(table).parse(cr), { objectName: 'p', given: { id: 'p' } });
    assert.deepEqual(Pipeline.parse(read), pipeline);
  });
});

describe("the tables' exceptions", () => {
  test('a value the CR field is left out for (omitIf) is not written, and reads back as it was', () => {
    const team = TeamSpec.parse({ id: 'ops', name: 'ops', priority: 0, soft_budget: false });
    const cr = writeFields(TEAM_FIELDS, team, { objectName: 'ops', given: {} });
    assert.deepEqual(cr, {});
    assert.deepEqual(
      TeamSpec.parse(readFields(TEAM_FIELDS, crObject(TEAM_FIELDS).parse(cr), { objectName: 'ops', given: { id: 'ops' } })),
      team,
    );
  });

  test('a name that defaults to metadata.name is written only when it differs, and its problems go where it came from', () => {
    const router = RouterSpec.parse({ name: 'chat', type: 'text-generation' });
    assert.equal(writeFields(ROUTER_FIELDS, router, context).name, undefined);
    assert.equal(writeFields(ROUTER_FIELDS, router, { ...context, objectName: 'chat-1' }).name, 'chat');
    assert.deepEqual(crPath(ROUTER_FIELDS, ['name'], {}), ['metadata', 'name']);
    assert.deepEqual(crPath(ROUTER_FIELDS, ['name'], { name: 'Chat' }), ['spec', 'name']);
  });

  test("a nested table's rules apply inside the object: the router's prices", () => {
    const router = RouterSpec.parse({ name: 'chat', type: 'text-generation', costs: { prompt_tokens: 1 } });
    assert.deepEqual(writeFields(ROUTER_FIELDS, router, context).costs, { promptTokens: '1', completionTokens: '0' });
    assert.deepEqual(crdField(ROUTER_FIELDS, 'costs')?.default, { promptTokens: '0', completionTokens: '0' });
    assert.deepEqual(crPath(ROUTER_FIELDS, ['costs', 'audio_minutes'], {}), ['spec', 'costs', 'audioMinutes']);
  });
});
