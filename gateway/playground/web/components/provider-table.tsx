// The list of providers (Providers page): each one's backend, whether its write-only key is set,
// its capacity with the slots in use now (fleet-wide for a queue-mode router) and its health as
// the gateway sees it, with edit and delete buttons. A provider with several replicas (urls) has
// a row under it for each: its address, slots in use, health and engine load (vllm providers whose
// /metrics are read: components/engine-load.tsx).
import type { Provider, RoutingLive } from '../api.ts';
import { EngineLoadCell } from './engine-load.tsx';
import { EditDeleteCell, ListTable, num } from './list-table.tsx';

type ProviderLive = RoutingLive['providers'][number];

export function ProviderTable(props: {
  providers: readonly Provider[];
  live: RoutingLive | null;
  onEdit: (p: Provider) => void;
  onDelete: (p: Provider) => Promise<void>;
}) {
  const liveOf = (id: string) => props.live?.providers.find((p) => p.id === id);
  const replicasOf = (id: string) => props.live?.providers.filter((p) => p.id === id && p.replica !== null) ?? [];
  // Engine load sits before the numbers: the row's last cells (timeout, cap, in use, health) keep their places from its end.
  return (
    <ListTable
      caption="Providers"
      columns={[
        'Id',
        'Router',
        'Type',
        'Model name',
        'URL',
        'Key',
        'Engine load',
        num('Timeout'),
        num('Max concurrent'),
        num('In use'),
        'Health',
      ]}
      actions
    >
      {props.providers.flatMap((p) => [
        <tr key={p.id}>
          <th scope="row">{p.id}</th>
          <td>{p.router}</td>
          <td>{p.type}</td>
          <td>{p.model_name}</td>
          <td>{'urls' in p && p.urls ? `${p.urls.length} replicas` : 'url' in p ? p.url : '–'}</td>
          <td>{p.has_key ? 'set' : 'not set'}</td>
          {replicasOf(p.id).length > 0 ? <td>see replicas</td> : <EngineLoadCell engine={liveOf(p.id)?.engines[0]} />}
          <td class="num">{p.timeout === undefined ? 'default' : `${p.timeout} s`}</td>
          <td class="num">{p.max_concurrent ?? '∞'}</td>
          <td class="num">
            {replicasOf(p.id).length > 0 ? replicasOf(p.id).reduce((sum, r) => sum + (r.in_use ?? 0), 0) : (liveOf(p.id)?.in_use ?? '–')}
          </td>
          {replicasOf(p.id).length > 0 ? <td>see replicas</td> : <HealthCell live={liveOf(p.id)} />}
          <EditDeleteCell
            name={p.id}
            question={`Delete provider "${p.id}"?`}
            onEdit={() => props.onEdit(p)}
            onDelete={() => props.onDelete(p)}
          />
        </tr>,
        ...replicasOf(p.id).map((r) => (
          <tr key={`${p.id}@${r.replica}`} class="replica">
            <th scope="row" colSpan={5}>
              {r.replica}
            </th>
            <td />
            <EngineLoadCell engine={r.engines[0]} />
            <td colSpan={2} />
            <td class="num">{r.in_use ?? '–'}</td>
            <HealthCell live={r} />
            <td />
          </tr>
        )),
      ])}
    </ListTable>
  );
}

/** Health as the gateway sees it: taken out by its checks, its breaker open or half-open, or fine. */
function HealthCell({ live }: { live: ProviderLive | undefined }) {
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
