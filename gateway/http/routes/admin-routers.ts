// The admin API's routers (spec 2.1, 4): the model names users call. Admins only. Every change
// goes through the catalog, so all gateways on the store serve it, this one before it answers.
// Routers are named in paths by their name, which may hold slashes (`meta-llama/Llama-3.1-8B`).
import type { FastifyInstance } from 'fastify';
import type { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import { errors } from '../../api/api-error.ts';
import { assertSameIdentity, bodyObject, identityIn, mergePatch, parseWith } from '../../api/payloads.ts';
import { commit, routerOr404, type CatalogEditDeps } from './catalog-edits.ts';
import { DeletedRouter, RouterList, RouterView } from '../views/catalog.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';
import { list } from '../views/lists.ts';

type NameParams = { Params: { '*': string } };

/** The routers' routes, a plugin of the admin API's admins-only scope (admin.ts). */
export async function adminRouters(instance: FastifyInstance, deps: CatalogEditDeps): Promise<void> {
  const admin = withResponseSchemas(instance);
  admin.post('/v1/admin/routers', responds({ 201: RouterView }), async (request, reply) => {
    const spec = parseWith(RouterSpec, mergePatch({}, bodyObject(request.body)));
    let providers: ProviderSpec[] = [];
    await commit(deps, (current) => {
      assertNamesFree(current.routers, spec, null);
      providers = current.providers;
      return { routers: [...current.routers, spec], providers: current.providers };
    });
    reply.code(201);
    return routerView(spec, providers);
  });

  admin.get('/v1/admin/routers', responds({ 200: RouterList }), async () => {
    const { routers, providers } = await deps.catalog.current();
    return list(routers.map((r) => routerView(r, providers)));
  });

  admin.get<NameParams>('/v1/admin/routers/*', responds({ 200: RouterView }), async (request) => {
    const { routers, providers } = await deps.catalog.current();
    return routerView(routerOr404(routers, request.params['*']), providers);
  });

  admin.patch('/v1/admin/routers', responds({ 200: RouterView }), async (request) => {
    const patch = bodyObject(request.body);
    return update(deps, identityIn(patch, 'name'), patch);
  });

  admin.patch<NameParams>('/v1/admin/routers/*', responds({ 200: RouterView }), async (request) =>
    update(deps, request.params['*'], bodyObject(request.body)),
  );

  admin.delete<NameParams>('/v1/admin/routers/*', responds({ 200: DeletedRouter }), async (request) => {
    const name = request.params['*'];
    let deleted: string[] = [];
    await commit(deps, (current) => {
      routerOr404(current.routers, name);
      deleted = current.providers.filter((p) => p.router === name).map((p) => p.id);
      return { routers: current.routers.filter((r) => r.name !== name), providers: current.providers.filter((p) => p.router !== name) };
    });
    return { object: 'router', name, deleted: true, deleted_providers: deleted };
  });
}

/** Merges the patch onto the router and validates the result whole; the name stays. */
async function update(deps: CatalogEditDeps, name: string, patch: Record<string, unknown>) {
  assertSameIdentity(patch, 'name', name, 'router');
  let next: RouterSpec | undefined;
  let providers: ProviderSpec[] = [];
  await commit(deps, (current) => {
    const router = routerOr404(current.routers, name);
    next = parseWith(RouterSpec, mergePatch(router, patch));
    assertNamesFree(current.routers, next, name);
    providers = current.providers;
    return { routers: current.routers.map((r) => (r === router ? next! : r)), providers: current.providers };
  });
  return routerView(next!, providers);
}

/** Names and aliases are unique across routers: a clash with another router is a 409. */
function assertNamesFree(routers: readonly RouterSpec[], spec: RouterSpec, replacing: string | null): void {
  const called = [spec.name, ...spec.aliases];
  called.forEach((name, i) => {
    const param = i === 0 ? 'name' : `aliases[${i - 1}]`;
    if (called.indexOf(name) !== i) throw errors.invalidRequest(`${param}: "${name}" is listed twice for this router`, param);
    const owner = routers.find((r) => r.name !== replacing && (r.name === name || r.aliases.includes(name)));
    if (!owner) return;
    const message =
      i === 0 && owner.name === name ? `Router "${name}" already exists` : `"${name}" is already used by router "${owner.name}"`;
    throw errors.conflict(message, param);
  });
}

/** A router as the API shows it: prices as numbers per million tokens, and its providers' ids. */
function routerView(spec: RouterSpec, providers: readonly ProviderSpec[]): RouterView {
  return {
    object: 'router',
    name: spec.name,
    type: spec.type,
    load_balancing_strategy: spec.load_balancing_strategy,
    // null: the gateway's --routing-mode (GET /v1/admin/routing says which applies).
    routing_mode: spec.routing_mode ?? null,
    queue: spec.queue ?? null,
    aliases: spec.aliases,
    fallbacks: spec.fallbacks,
    // null: on when fallbacks are set.
    context_fallback: spec.context_fallback ?? null,
    costs: {
      prompt_tokens: Number(spec.costs.prompt_tokens),
      completion_tokens: Number(spec.costs.completion_tokens),
      audio_minutes: Number(spec.costs.audio_minutes),
      // Shown only when set: unset, cached and written prompt tokens cost the prompt price.
      ...(spec.costs.cached_prompt_tokens !== undefined && { cached_prompt_tokens: Number(spec.costs.cached_prompt_tokens) }),
      ...(spec.costs.cache_write_prompt_tokens !== undefined && {
        cache_write_prompt_tokens: Number(spec.costs.cache_write_prompt_tokens),
      }),
    },
    costs_unit: 'per_million_tokens',
    max_context_length: spec.max_context_length,
    max_completion_tokens: spec.max_completion_tokens ?? null,
    rate_limits: spec.rate_limits ?? null,
    providers: providers.filter((p) => p.router === spec.name).map((p) => p.id),
  };
}
