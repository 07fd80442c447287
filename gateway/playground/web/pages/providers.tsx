// Providers (admin): the backends behind each router. The key is write-only (the list says
// whether one is set, never what it is). As spec 2.2 asks, the form also shows and edits the
// chosen router's prompt and completion token costs; they are saved on the router, after the
// provider, and only when changed. Each provider's capacity (max concurrent) is shown with the
// slots in use now: fleet-wide for a queue-mode router.
import { useEffect, useRef, useState } from 'preact/hooks';
import { segment, type List, type Provider, type Router, type RoutingLive } from '../api.ts';
import { useSession } from '../context.ts';
import { CheckboxField, CreateOrEditForm, SelectField, TextField, useForm, numberOrNull, textOrNull, type Values } from '../forms.tsx';
import { price } from '../format.ts';
import { DEFAULT_URLS, options, PROVIDER_TYPES, URL_REQUIRED, ZONES } from '../kinds.ts';
import { readable } from '../messages.ts';
import { readAfterWrite } from '../read-after-write.ts';
import { baseUrl, check, decimal, integer, number, required, resourceId } from '../rules.ts';
import { EditDeleteCell, ListTable, num } from '../components/list-table.tsx';
import { LoadError } from '../components/notice.tsx';

type ProviderField =
  | 'id'
  | 'router'
  | 'type'
  | 'model'
  | 'url'
  | 'key'
  | 'clearKey'
  | 'timeout'
  | 'retries'
  | 'healthCheck'
  | 'healthInterval'
  | 'maxConcurrent'
  | 'prompt'
  | 'completion'
  | 'paramsTotal'
  | 'paramsActive'
  | 'zone'
  | 'pue'
  | 'latency'
  | 'tokensPerSecond'
  | 'completionTokens';

const EMPTY: Values<ProviderField> = {
  id: '',
  router: '',
  type: 'simulator',
  model: '',
  url: '',
  key: '',
  clearKey: 'false',
  timeout: '',
  retries: '',
  healthCheck: 'false',
  healthInterval: '15',
  maxConcurrent: '',
  prompt: '',
  completion: '',
  paramsTotal: '',
  paramsActive: '',
  zone: '',
  pue: '',
  latency: '0',
  tokensPerSecond: '0',
  completionTokens: '32',
};

const PARAMS: Record<string, ProviderField> = {
  id: 'id',
  router: 'router',
  type: 'type',
  model_name: 'model',
  url: 'url',
  key: 'key',
  timeout: 'timeout',
  retries: 'retries',
  'health_check.interval_seconds': 'healthInterval',
  max_concurrent: 'maxConcurrent',
  'carbon.params_total_b': 'paramsTotal',
  'carbon.params_active_b': 'paramsActive',
  'carbon.zone': 'zone',
  'carbon.pue': 'pue',
  'simulator.latency_ms': 'latency',
  'simulator.tokens_per_second': 'tokensPerSecond',
  'simulator.completion_tokens': 'completionTokens',
  // The router's costs, saved by a second request (PATCH /v1/admin/routers/...).
  'costs.prompt_tokens': 'prompt',
  'costs.completion_tokens': 'completion',
};

export function ProvidersPage() {
  const session = useSession();
  const [providers, setProviders] = useState<Provider[] | null>(null);
  const [routers, setRouters] = useState<Router[]>([]);
  const [live, setLive] = useState<RoutingLive | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Provider | null>(null);
  const form = useForm<ProviderField>('provider', EMPTY);
  const formHeading = useRef<HTMLHeadingElement>(null);
  const v = form.values;

  const read = async () => {
    const [p, r] = await Promise.all([
      session.call<List<Provider>>('GET', '/v1/admin/providers'),
      session.call<List<Router>>('GET', '/v1/admin/routers'),
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
  const liveOf = (id: string) => live?.providers.find((p) => p.id === id);

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
    form.reset({
      id: p.id,
      router: p.router,
      type: p.type,
      model: p.model_name,
      url: p.url ?? '',
      key: '',
      clearKey: 'false',
      timeout: p.timeout === undefined ? '' : String(p.timeout),
      retries: p.retries === undefined ? '' : String(p.retries),
      healthCheck: String(p.health_check?.enabled === true),
      healthInterval: String(p.health_check?.interval_seconds ?? 15),
      maxConcurrent: p.max_concurrent === undefined ? '' : String(p.max_concurrent),
      prompt: router ? price(router.costs.prompt_tokens) : '',
      completion: router ? price(router.costs.completion_tokens) : '',
      paramsTotal: p.carbon?.params_total_b?.toString() ?? '',
      paramsActive: p.carbon?.params_active_b?.toString() ?? '',
      zone: p.carbon?.zone ?? '',
      pue: p.carbon?.pue?.toString() ?? '',
      latency: String(p.simulator?.latency_ms ?? 0),
      tokensPerSecond: String(p.simulator?.tokens_per_second ?? 0),
      completionTokens: String(p.simulator?.completion_tokens ?? 32),
    });
    formHeading.current?.focus();
  };
  const stopEditing = () => {
    setEditing(null);
    form.reset({ ...EMPTY });
    if (routers[0]) chooseRouter(routers[0].name);
  };

  const save = () =>
    form.submit(
      validate,
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
        form.reset({ ...EMPTY });
        const first = list.find((r) => r.name === values.router) ?? list[0];
        if (first) chooseRouter(first.name, list);
      },
      PARAMS,
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

  const simulator = v.type === 'simulator';
  return (
    <section>
      <h1 tabIndex={-1}>Providers</h1>
      <p class="lead">A provider is a real backend behind a router. Keys are write-only: the gateway never shows them again.</p>
      <LoadError error={error} />
      {providers && providers.length === 0 && <p>No providers yet.</p>}
      {providers && providers.length > 0 && (
        <ListTable
          caption="Providers"
          columns={['Id', 'Router', 'Type', 'Model name', 'URL', 'Key', num('Timeout'), num('Max concurrent'), num('In use'), 'Health']}
          actions
        >
          {providers.map((p) => (
            <tr key={p.id}>
              <th scope="row">{p.id}</th>
              <td>{p.router}</td>
              <td>{p.type}</td>
              <td>{p.model_name}</td>
              <td>{p.url ?? '–'}</td>
              <td>{p.has_key ? 'set' : 'not set'}</td>
              <td class="num">{p.timeout === undefined ? 'default' : `${p.timeout} s`}</td>
              <td class="num">{p.max_concurrent ?? '∞'}</td>
              <td class="num">{liveOf(p.id)?.in_use ?? '–'}</td>
              <HealthCell live={liveOf(p.id)} />
              <EditDeleteCell name={p.id} question={`Delete provider "${p.id}"?`} onEdit={() => edit(p)} onDelete={() => remove(p)} />
            </tr>
          ))}
        </ListTable>
      )}
      <CreateOrEditForm
        form={form}
        kind="provider"
        editing={editing?.id ?? null}
        headingRef={formHeading}
        onSubmit={save}
        onCancel={stopEditing}
        note={routers.length === 0 && providers && <p>Create a router first: every provider serves one.</p>}
      >
        <div class="row">
          <div class="field">
            <label for="provider-router">
              Router<span aria-hidden="true"> *</span>
            </label>
            <select
              id="provider-router"
              value={v.router}
              aria-required="true"
              aria-invalid={form.problems.router ? 'true' : undefined}
              aria-describedby={form.problems.router ? 'provider-router-problem' : undefined}
              onChange={(e) => chooseRouter(e.currentTarget.value)}
            >
              {routers.map((r) => (
                <option key={r.name} value={r.name}>
                  {r.name}
                </option>
              ))}
            </select>
            {form.problems.router && (
              <p class="problem" id="provider-router-problem">
                {form.problems.router}
              </p>
            )}
          </div>
          <SelectField form={form} name="type" label="Type" required options={options(PROVIDER_TYPES)} />
          <TextField
            form={form}
            name="id"
            label="Id (optional)"
            disabled={editing !== null}
            hint={editing ? 'An id cannot be changed.' : 'Generated from the router name when empty.'}
          />
        </div>
        <div class="row">
          <TextField form={form} name="model" label="Model name" required hint="The model name sent to the backend." />
          {!simulator && (
            <TextField
              form={form}
              name="url"
              label={URL_REQUIRED.includes(v.type) ? 'URL' : 'URL (optional)'}
              required={URL_REQUIRED.includes(v.type)}
              placeholder={DEFAULT_URLS[v.type] ?? 'http://vllm:8000'}
              hint="Base address, without /v1."
            />
          )}
          <TextField
            form={form}
            name="timeout"
            label="Timeout (seconds)"
            inputMode="decimal"
            hint="Optional: for the first byte, and between two streamed chunks; empty: the gateway's settings."
          />
          <TextField
            form={form}
            name="retries"
            label="Retries (optional)"
            inputMode="numeric"
            hint="After a 429, 502, 503, 504 or a refused connection, with backoff; empty: the gateway's --retries."
          />
          <TextField
            form={form}
            name="maxConcurrent"
            label="Max concurrent (optional)"
            inputMode="numeric"
            hint="Most requests at once (across the fleet in queue mode); 0 closes it; empty is unlimited."
          />
        </div>
        <div class="row">
          <TextField
            form={form}
            name="key"
            label="API key of the backend"
            type="password"
            autocomplete="new-password"
            hint={
              editing
                ? `Write-only. Currently ${editing.has_key ? 'set' : 'not set'}; leave empty to keep it.`
                : 'Write-only: never shown again. Optional.'
            }
          />
          {editing?.has_key && <CheckboxField form={form} name="clearKey" label="Remove the key" />}
        </div>
        {!simulator && (
          <div class="row">
            <CheckboxField form={form} name="healthCheck" label="Health checks: probe the backend's health route" />
            {v.healthCheck === 'true' && (
              <TextField form={form} name="healthInterval" label="Probe every (seconds)" inputMode="decimal" required />
            )}
          </div>
        )}
        <fieldset>
          <legend>Prices of router {v.router || '…'} (per 1M tokens)</legend>
          <p class="hint">Prices belong to the router: changing them here changes them for all its providers.</p>
          <div class="row">
            <TextField form={form} name="prompt" label="Prompt token cost" inputMode="decimal" required />
            <TextField form={form} name="completion" label="Completion token cost" inputMode="decimal" required />
          </div>
        </fieldset>
        <fieldset>
          <legend>Carbon inputs (optional)</legend>
          <div class="row">
            <TextField form={form} name="paramsTotal" label="Total parameters (billions)" inputMode="decimal" />
            <TextField
              form={form}
              name="paramsActive"
              label="Active parameters (billions)"
              inputMode="decimal"
              hint="Mixture of experts; empty for dense models."
            />
            <SelectField form={form} name="zone" label="Electricity zone" options={[['', 'default (WOR)'], ...options(ZONES)]} />
            <TextField form={form} name="pue" label="PUE" inputMode="decimal" hint="Data centre overhead, 1 to 3 (default 1.2)." />
          </div>
        </fieldset>
        {simulator && (
          <fieldset>
            <legend>Simulator</legend>
            <div class="row">
              <TextField form={form} name="latency" label="Latency (ms)" inputMode="numeric" />
              <TextField
                form={form}
                name="tokensPerSecond"
                label="Tokens per second"
                inputMode="decimal"
                hint="0 streams as fast as possible."
              />
              <TextField
                form={form}
                name="completionTokens"
                label="Completion tokens"
                inputMode="numeric"
                hint="When a request sets no max_tokens."
              />
            </div>
          </fieldset>
        )}
      </CreateOrEditForm>
    </section>
  );
}

/** Health as the gateway sees it: taken out by its checks, its breaker open or half-open, or fine. */
function HealthCell({ live }: { live: RoutingLive['providers'][number] | undefined }) {
  if (!live) return <td>–</td>;
  if (live.healthy === false)
    return (
      <td class="unhealthy" title={live.health_reason ?? undefined}>
        unhealthy{live.health_reason ? `: ${live.health_reason}` : ''}
      </td>
    );
  if (live.breaker === 'open')
    return (
      <td class="unhealthy" title={live.breaker_reason ?? undefined}>
        out (breaker open){live.breaker_reason ? `: ${live.breaker_reason}` : ''}
      </td>
    );
  if (live.breaker === 'half_open') return <td>probing</td>;
  return <td>{live.healthy === true ? 'healthy' : 'ok'}</td>;
}

function validate(v: Values<ProviderField>) {
  const simulator = v.type === 'simulator';
  return {
    id: check(v.id.trim(), [resourceId], true) ?? undefined,
    router: check(v.router, [required]) ?? undefined,
    model: check(v.model, [required]) ?? (v.model.length > 256 ? 'At most 256 characters.' : undefined),
    url: simulator
      ? undefined
      : (check(v.url.trim(), URL_REQUIRED.includes(v.type) ? [required, baseUrl] : [baseUrl], !URL_REQUIRED.includes(v.type)) ?? undefined),
    timeout: check(v.timeout, [number(0, 3600, { exclusiveMin: true })], true) ?? undefined,
    retries: check(v.retries, [integer(0, 10)], true) ?? undefined,
    healthInterval:
      !simulator && v.healthCheck === 'true' ? (check(v.healthInterval, [required, number(1, 3600)]) ?? undefined) : undefined,
    maxConcurrent: check(v.maxConcurrent, [integer(0, 1_000_000)], true) ?? undefined,
    prompt: check(v.prompt, [required, decimal(9)]) ?? undefined,
    completion: check(v.completion, [required, decimal(9)]) ?? undefined,
    paramsTotal: check(v.paramsTotal, [number(0, 100_000, { exclusiveMin: true })], true) ?? undefined,
    paramsActive: check(v.paramsActive, [number(0, 100_000, { exclusiveMin: true })], true) ?? undefined,
    pue: check(v.pue, [number(1, 3)], true) ?? undefined,
    latency: simulator ? (check(v.latency, [integer(0, 600_000)]) ?? undefined) : undefined,
    tokensPerSecond: simulator ? (check(v.tokensPerSecond, [number(0, 100_000)]) ?? undefined) : undefined,
    completionTokens: simulator ? (check(v.completionTokens, [integer(1, 100_000)]) ?? undefined) : undefined,
  };
}

/**
 * The provider's fields as a merge patch that also works for creation: a field the chosen type
 * does not have, or an emptied optional one, is null (removed, so its default applies).
 */
function providerBody(v: Values<ProviderField>, editing: Provider | null): Record<string, unknown> {
  const simulator = v.type === 'simulator';
  const carbonSet = [v.paramsTotal, v.paramsActive, v.zone, v.pue].some((x) => x.trim() !== '');
  const key = v.key !== '' ? v.key : editing && v.clearKey === 'true' ? null : undefined;
  return {
    router: v.router,
    type: v.type,
    model_name: v.model,
    url: simulator ? null : textOrNull(v.url),
    ...(key === undefined ? {} : { key }),
    timeout: numberOrNull(v.timeout),
    retries: numberOrNull(v.retries),
    health_check: !simulator && v.healthCheck === 'true' ? { enabled: true, interval_seconds: Number(v.healthInterval) } : null,
    max_concurrent: numberOrNull(v.maxConcurrent),
    carbon: carbonSet
      ? {
          params_total_b: numberOrNull(v.paramsTotal),
          params_active_b: numberOrNull(v.paramsActive),
          zone: textOrNull(v.zone),
          pue: numberOrNull(v.pue),
        }
      : null,
    simulator: simulator
      ? { latency_ms: Number(v.latency), tokens_per_second: Number(v.tokensPerSecond), completion_tokens: Number(v.completionTokens) }
      : null,
  };
}
