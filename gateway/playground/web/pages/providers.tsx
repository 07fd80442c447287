// Providers (admin): the backends behind each router. The key is write-only (the list says
// whether one is set, never what it is). As spec 2.2 asks, the form also shows and edits the
// chosen router's prompt and completion token costs; they are saved on the router, after the
// provider, and only when changed. Each provider's capacity (max concurrent) is shown with the
// slots in use now: fleet-wide for a queue-mode router. The list, the form's fields and its
// values are components of their own (components/provider-*.tsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import { segment, type Provider, type ProviderList, type Router, type RouterList, type RoutingLive } from '../api.ts';
import { useSession } from '../context.ts';
import { CreateOrEditForm, useForm } from '../forms.tsx';
import { price } from '../format.ts';
import { readable } from '../messages.ts';
import { readAfterWrite } from '../read-after-write.ts';
import { LoadError } from '../components/notice.tsx';
import { ProviderFields } from '../components/provider-form.tsx';
import { ProviderTable } from '../components/provider-table.tsx';
import {
  EMPTY_PROVIDER,
  PROVIDER_PARAMS,
  providerBody,
  providerValues,
  validateProvider,
  type ProviderField,
} from '../components/provider-values.ts';

export function ProvidersPage() {
  const session = useSession();
  const [providers, setProviders] = useState<Provider[] | null>(null);
  const [routers, setRouters] = useState<Router[]>([]);
  const [live, setLive] = useState<RoutingLive | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Provider | null>(null);
  const form = useForm<ProviderField>('provider', EMPTY_PROVIDER);
  const formHeading = useRef<HTMLHeadingElement>(null);

  const read = async () => {
    const [p, r] = await Promise.all([
      session.call<ProviderList>('GET', '/v1/admin/providers'),
      session.call<RouterList>('GET', '/v1/admin/routers'),
    ]);
    return { providers: p.data, routers: r.data };
  };
  /** Shows both lists once read, and returns the routers for the form ([] if the read failed). */
  const show = (lists: ReturnType<typeof read>): Promise<Router[]> =>
    lists.then(
      (l) => {
        setProviders(l.providers);
        setRouters(l.routers);
        return l.routers;
      },
      (e) => {
        setError(readable(e));
        return [];
      },
    );
  const load = () => show(read());
  /** Says `done` and shows the lists once they have the write (in Kubernetes mode, a moment later). */
  const reload = (done: string) => show(readAfterWrite(session, done, { providers, routers }, read));
  // Slots in use change by the second: read with the list, and again every few seconds.
  const readLive = () => session.call<RoutingLive>('GET', '/v1/admin/routing').then(setLive, () => setLive(null));
  useEffect(() => {
    load().then((list) => {
      if (list[0] && !form.values.router) chooseRouter(list[0].name, list);
    });
    readLive();
    const timer = setInterval(readLive, 5000);
    return () => clearInterval(timer);
  }, []);
  /** Picking a router shows its current prices in the cost fields. */
  const chooseRouter = (name: string, list: readonly Router[] = routers) => {
    const router = list.find((r) => r.name === name);
    form.set('router', name);
    form.set('prompt', router ? price(router.costs.prompt_tokens) : '');
    form.set('completion', router ? price(router.costs.completion_tokens) : '');
  };

  const edit = (p: Provider) => {
    const router = routers.find((r) => r.name === p.router);
    setEditing(p);
    form.reset(providerValues(p, router));
    formHeading.current?.focus();
  };
  const stopEditing = () => {
    setEditing(null);
    form.reset({ ...EMPTY_PROVIDER });
    if (routers[0]) chooseRouter(routers[0].name);
  };

  const save = () =>
    form.submit(
      validateProvider,
      async (values) => {
        const body = providerBody(values, editing);
        const saved = editing
          ? await session.call<Provider>('PATCH', `/v1/admin/providers/${encodeURIComponent(editing.id)}`, body)
          : await session.call<Provider>('POST', '/v1/admin/providers', { ...(values.id.trim() ? { id: values.id.trim() } : {}), ...body });
        const router = routers.find((r) => r.name === values.router);
        const costsChanged =
          router && (Number(values.prompt) !== router.costs.prompt_tokens || Number(values.completion) !== router.costs.completion_tokens);
        if (router && costsChanged) {
          await session.call('PATCH', `/v1/admin/routers/${segment(router.name)}`, {
            costs: { prompt_tokens: values.prompt.trim(), completion_tokens: values.completion.trim() },
          });
        }
        setEditing(null);
        const list = await reload(
          `Provider "${saved.id}" ${editing ? 'saved' : 'created'}${costsChanged ? `; prices of router "${values.router}" updated` : ''}.`,
        );
        form.reset({ ...EMPTY_PROVIDER });
        const first = list.find((r) => r.name === values.router) ?? list[0];
        if (first) chooseRouter(first.name, list);
      },
      PROVIDER_PARAMS,
    );

  const remove = async (p: Provider) => {
    try {
      await session.call('DELETE', `/v1/admin/providers/${encodeURIComponent(p.id)}`);
      if (editing?.id === p.id) stopEditing();
      await reload(`Provider "${p.id}" deleted.`);
    } catch (e) {
      setError(readable(e));
    }
  };

  return (
    <section>
      <h1 tabIndex={-1}>Providers</h1>
      <p class="lead">A provider is a real backend behind a router. Keys are write-only: the gateway never shows them again.</p>
      <LoadError error={error} />
      {providers && providers.length === 0 && <p>No providers yet.</p>}
      {providers && providers.length > 0 && <ProviderTable providers={providers} live={live} onEdit={edit} onDelete={remove} />}
      <CreateOrEditForm
        form={form}
        kind="provider"
        editing={editing?.id ?? null}
        headingRef={formHeading}
        onSubmit={save}
        onCancel={stopEditing}
        note={routers.length === 0 && providers && <p>Create a router first: every provider serves one.</p>}
      >
        <ProviderFields form={form} editing={editing} routers={routers} onRouter={(name) => chooseRouter(name)} />
      </CreateOrEditForm>
    </section>
  );
}
