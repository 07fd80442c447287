// The admin API's providers (spec 2.2, 4): the backends behind a router. Admins only. A
// provider's `key` is write-only: answers say `has_key` and nothing more. A provider naming a
// router that does not exist is a 404 naming that router, at creation as on update.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { ModelName } from '../../../core/resources/fields.ts';
import type { CatalogContent } from '../../catalog/catalog-service.ts';
import { maskUrl } from '../../providers/secrets.ts';
import { errors } from '../../api/api-error.ts';
import { assertSameIdentity, bodyObject, mergePatch, parseWith } from '../../api/payloads.ts';
import { commit, routerOr404, type CatalogEditDeps } from './catalog-edits.ts';
import { DeletedProvider, ProviderList, ProviderView } from '../views/catalog.ts';
import { responds, withResponseSchemas } from '../views/checked-json.ts';
import { list } from '../views/lists.ts';

type IdParams = { Params: { id: string } };

const ListQuery = z.strictObject({ router: ModelName.optional() });

/** The providers' routes, a plugin of the admin API's admins-only scope (admin.ts). */
export async function adminProviders(instance: FastifyInstance, deps: CatalogEditDeps): Promise<void> {
  const admin = withResponseSchemas(instance);
  admin.post('/v1/admin/providers', responds({ 201: ProviderView }), async (request, reply) => {
    const input = mergePatch({}, bodyObject(request.body)) as Record<string, unknown>;
    const parsed = parseWith(ProviderSpec, { ...input, id: input.id ?? newProviderId(input.router) });
    // In Kubernetes mode a ModelProvider's id is derived from its namespace and name.
    const spec = deps.catalog.providerId ? { ...parsed, id: deps.catalog.providerId(parsed.id) } : parsed;
    await commit(deps, (current) => {
      routerOr404(current.routers, spec.router, 'router');
      if (current.providers.some((p) => p.id === spec.id)) throw errors.conflict(`A provider with id "${spec.id}" already exists`, 'id');
      return { routers: current.routers, providers: [...current.providers, spec] };
    });
    reply.code(201);
    return providerView(spec);
  });

  admin.get('/v1/admin/providers', responds({ 200: ProviderList }), async (request) => {
    const query = parseWith(ListQuery, request.query);
    const { routers, providers } = await deps.catalog.current();
    if (query.router !== undefined) routerOr404(routers, query.router, 'router');
    const listed = query.router === undefined ? providers : providers.filter((p) => p.router === query.router);
    return list(listed.map(providerView));
  });

  admin.get<IdParams>('/v1/admin/providers/:id', responds({ 200: ProviderView }), async (request) =>
    providerView(providerOr404(await deps.catalog.current(), request.params.id)),
  );

  admin.patch<IdParams>('/v1/admin/providers/:id', responds({ 200: ProviderView }), async (request) => {
    const { id } = request.params;
    const patch = bodyObject(request.body);
    assertSameIdentity(patch, 'id', id, 'provider');
    let next: ProviderSpec | undefined;
    await commit(deps, (current) => {
      const provider = providerOr404(current, id);
      next = parseWith(ProviderSpec, mergePatch(provider, patch));
      routerOr404(current.routers, next.router, 'router');
      return { routers: current.routers, providers: current.providers.map((p) => (p === provider ? next! : p)) };
    });
    return providerView(next!);
  });

  admin.delete<IdParams>('/v1/admin/providers/:id', responds({ 200: DeletedProvider }), async (request) => {
    const { id } = request.params;
    let router = '';
    await commit(deps, (current) => {
      router = providerOr404(current, id).router;
      return { routers: current.routers, providers: current.providers.filter((p) => p.id !== id) };
    });
    return { object: 'provider', id, router, deleted: true };
  });
}

function providerOr404(catalog: CatalogContent, id: string): ProviderSpec {
  const provider = catalog.providers.find((p) => p.id === id);
  if (!provider) throw errors.notFound(`Provider "${id}" not found`);
  return provider;
}

/** Everything but the backend's key, which is only ever written, and the secrets in its url (maskUrl). */
function providerView(spec: ProviderSpec): ProviderView {
  const { key, id, router, ...shown } = spec;
  const view = { object: 'provider' as const, id, router, ...shown, carbon: shown.carbon ?? null, has_key: key !== undefined };
  // Replaced where it stands, so the fields keep their order.
  if ('url' in view && view.url !== undefined) view.url = maskUrl(view.url);
  if ('urls' in view && view.urls !== undefined) view.urls = view.urls.map(maskUrl);
  return view;
}

/**
 * `<router>-<6 hex>`, the router's name folded into the characters of a ResourceId; an
 * invalid router is left for the schema to report.
 */
function newProviderId(router: unknown): string {
  const base =
    typeof router === 'string'
      ? router
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .slice(0, 48)
          .replace(/^-+|-+$/g, '')
      : '';
  return `${base || 'provider'}-${randomBytes(3).toString('hex')}`;
}
