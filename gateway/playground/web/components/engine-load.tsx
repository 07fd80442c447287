// A replica's engine load on the Providers page (issue 28, "Visible"): what its vLLM /metrics last
// said (requests waiting and running, KV cache use) and whether routing counts it as saturated
// (it then receives nothing new while another replica has room), or why routing does without its
// signals (stale, failing, not read yet). Nothing for a provider whose engine is not read.
import type { RoutingLive } from '../api.ts';

type EngineLive = RoutingLive['providers'][number]['engines'][number];

export function EngineLoadCell({ engine }: { engine: EngineLive | undefined }) {
  if (!engine) return <td>–</td>;
  if (engine.signals !== 'fresh') return <td class="stale">{notFresh(engine)}</td>;
  const parts = [
    `${engine.waiting ?? '?'} waiting`,
    `${engine.running ?? '?'} running`,
    `KV ${engine.kv_cache_usage === null ? '?' : `${Math.round(engine.kv_cache_usage * 100)}%`}`,
  ];
  const limits = `saturated at ${engine.max_waiting} waiting or KV ${Math.round(engine.max_kv_cache * 100)}%`;
  return (
    <td class={engine.saturated ? 'saturated' : undefined} title={limits}>
      {parts.join(' · ')}
      {engine.saturated ? ' · saturated' : ''}
    </td>
  );
}

/** Why the signals are not used: routing then chooses as it does without them. */
function notFresh(engine: EngineLive): string {
  const age = engine.signals_age_ms === null ? '' : ` (${Math.round(engine.signals_age_ms / 1000)} s old)`;
  if (engine.signals === 'stale') return `stale signals${age}`;
  if (engine.signals === 'failing') return `signals failing${engine.signals_reason ? `: ${engine.signals_reason}` : ''}`;
  return 'not read yet';
}
