// Response schemas (gateway/http/views/checked-json.ts): an answer is checked against its
// route's zod schema and written as the handler made it, byte for byte (field order included);
// a field the schema does not name (a secret) is never sent, the answer is a 500 instead;
// errors and text the route wrote itself (CSV, a cached list) are sent as they are; and a
// schema that is not zod's is refused when the route is registered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errors } from '../../../gateway/api/api-error.ts';
import { errorHandler } from '../../../gateway/http/error-handler.ts';
import { LogThrottle } from '../../../gateway/observability/log-throttle.ts';
import { checkedJson, responds, withResponseSchemas } from '../../../gateway/http/views/checked-json.ts';

const Key = z.strictObject({ id: z.string(), name: z.string(), budget: z.number().nullable() });

async function app(routes: (scope: FastifyInstance) => void) {
  const app = Fastify({ logger: false });
  app.setErrorHandler(errorHandler(1024, new LogThrottle()));
  app.register(async (scope) => routes(scope));
  await app.ready();
  return app;
}

test("an answer of its schema is sent as the handler made it: its own field order, not the schema's", async () => {
  const answer = { budget: null, name: 'app', id: 'k-1' };
  const server = await app((scope) => {
    withResponseSchemas(scope).get('/key', responds({ 200: Key }), () => answer);
  });
  const reply = await server.inject({ method: 'GET', url: '/key' });
  assert.equal(reply.statusCode, 200);
  assert.equal(reply.body, JSON.stringify(answer));
  assert.equal(reply.body, '{"budget":null,"name":"app","id":"k-1"}');
});

test('a field the schema does not name is never sent: the answer is a 500 that shows nothing of it', async () => {
  const server = await app((scope) => {
    const typed = withResponseSchemas(scope);
    // What a view that spread a whole record would return (a key's hash beside its fields).
    const leaky: { id: string; name: string; budget: null } = Object.assign(
      { id: 'k-1', name: 'app', budget: null },
      { hash: 'secret-hash' },
    );
    typed.get('/key', responds({ 200: Key }), () => leaky);
  });
  const reply = await server.inject({ method: 'GET', url: '/key' });
  assert.equal(reply.statusCode, 500);
  assert.doesNotMatch(reply.body, /secret-hash|hash/);
  assert.equal(JSON.parse(reply.body).error.code, 'internal_error');
});

test('an error and text the route wrote itself are sent unchecked', async () => {
  const server = await app((scope) => {
    const typed = withResponseSchemas(scope);
    typed.get('/csv', responds({ 200: z.union([Key, z.string()]) }), (_request, reply) => {
      reply.type('text/csv; charset=utf-8');
      return 'id,name\r\nk-1,app\r\n';
    });
    typed.get('/gone', responds({ 200: Key }), () => {
      throw errors.notFound('No such key');
    });
  });
  const csv = await server.inject({ method: 'GET', url: '/csv' });
  assert.equal(csv.body, 'id,name\r\nk-1,app\r\n');
  const gone = await server.inject({ method: 'GET', url: '/gone' });
  assert.equal(gone.statusCode, 404);
  assert.equal(JSON.parse(gone.body).error.message, 'No such key');
});

test('checkedJson writes what it checked, and names the route when the check fails', () => {
  const write = checkedJson(Key, 'GET /key');
  assert.equal(write({ id: 'k', name: 'n', budget: 1.5 }), '{"id":"k","name":"n","budget":1.5}');
  assert.throws(() => write({ id: 'k', name: 'n', budget: '1.5' }), /GET \/key does not match its response schema/);
});

test('a response schema that is not a zod schema is refused when the route is registered', async () => {
  const server = Fastify({ logger: false });
  server.register(async (scope) => {
    withResponseSchemas(scope).route({
      method: 'GET',
      url: '/json-schema',
      schema: { response: { 200: { type: 'object' } } },
      handler: () => ({}),
    });
  });
  await assert.rejects(async () => {
    await server.ready();
  }, /a response schema must be a zod schema/);
});
