// GET /v1/models and /v1/models/{model}: the routers, in OpenAI's list envelope with the spec's
// fields (id, type, aliases, max_context_length). A model is found by its id or any alias. With
// --hide-unavailable-models the list leaves out a router that cannot serve now (no provider live
// with its breaker closed, and no fallback); it can still be called, and found by its name.
// Answers are checked against their schemas (views/models.ts) as their text is written: the
// list's once per routing table (and per set of routers shown), as clients ask for it often.
import type { FastifyInstance } from 'fastify';
import type { ServedRouting } from '../../routing/served-routing.ts';
import type { RouterRoute, RoutingTable } from '../../routing/routing-table.ts';
import { errors } from '../../api/api-error.ts';
import { checkedJson } from '../views/checked-json.ts';
import { ModelList, ModelView } from '../views/models.ts';

const listText = checkedJson(ModelList, 'GET /v1/models');
const modelText = checkedJson(ModelView, 'GET /v1/models/*');

export interface ModelsDeps {
  readonly routing: ServedRouting;
  /** Whether the list shows a router (--hide-unavailable-models); undefined: it shows them all. */
  readonly serving: ((router: RouterRoute) => boolean) | undefined;
}

/** The models routes: a plugin for any valid key. */
export async function modelsApi(app: FastifyInstance, { routing, serving }: ModelsDeps): Promise<void> {
  // The list only changes with the table (and, when it hides routers, with which are shown):
  // serialised once per change.
  let cached: { table: RoutingTable; shown: string; text: string } | undefined;
  app.get('/v1/models', (_request, reply) => {
    const table = routing.table;
    const shown = serving ? table.routers.map((router) => (serving(router) ? '1' : '0')).join('') : '';
    if (cached?.table !== table || cached.shown !== shown) {
      const data = serving ? table.models.filter((_, i) => shown[i] === '1') : table.models;
      cached = { table, shown, text: listText({ object: 'list', data }) };
    }
    reply.type('application/json; charset=utf-8');
    return cached.text;
  });
  app.get<{ Params: { '*': string } }>('/v1/models/*', (request, reply) => {
    const table = routing.table;
    const router = table.lookup(request.params['*']);
    if (!router) throw errors.modelNotFound();
    reply.type('application/json; charset=utf-8');
    return modelText(table.models[table.routers.indexOf(router)]);
  });
}
