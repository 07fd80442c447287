// GET /v1/models and /v1/models/{model}: the routers, in OpenAI's list envelope with the spec's
// fields (id, type, aliases, max_context_length). A model is found by its id or any alias.
import type { FastifyInstance } from 'fastify';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { RoutingTable } from '../../routing/routing-table.ts';
import { errors } from '../api-error.ts';

export function registerModels(app: FastifyInstance, routing: ServedRouting): void {
  // The list only changes with the table: serialise it once per table.
  let cached: { table: RoutingTable; text: string } | undefined;
  app.get('/v1/models', (_request, reply) => {
    const table = routing.table;
    if (cached?.table !== table) cached = { table, text: JSON.stringify({ object: 'list', data: table.models }) };
    reply.type('application/json; charset=utf-8');
    return cached.text;
  });
  app.get<{ Params: { '*': string } }>('/v1/models/*', (request, reply) => {
    const table = routing.table;
    const router = table.lookup(request.params['*']);
    if (!router) throw errors.modelNotFound();
    reply.type('application/json; charset=utf-8');
    return JSON.stringify(table.models[table.routers.indexOf(router)]);
  });
}
