// Status (admins): what this gateway says of itself in /readyz, read again every few seconds:
// whether it is ready, the routing snapshot it serves, and the Redis it is on: the mode, the
// primary it is connected to (after a failover, the promoted one), each replica's state and how
// far behind it is, and the failover loss bound when on; on a Redis Cluster, every primary with
// the hash slots it serves and its replicas (docs/redis.md).
import { useEffect, useState } from 'preact/hooks';
import { readiness, type Readiness, type RedisStatus } from '../api.ts';
import { readable } from '../messages.ts';
import { ListTable, num } from '../components/list-table.tsx';
import { LoadError } from '../components/notice.tsx';

/** As often as the gateway reads its replicas (core/store/redis/redis-store.ts). */
const REFRESH_MS = 5000;

export function StatusPage() {
  const [status, setStatus] = useState<Readiness | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const read = () =>
      readiness().then(
        (answer) => {
          setStatus(answer);
          setError(null);
        },
        (e) => setError(readable(e)),
      );
    void read();
    const timer = setInterval(read, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <section>
      <h1 tabIndex={-1}>Status</h1>
      <p class="lead">
        What this gateway says of itself (<code>/readyz</code>), read again every {REFRESH_MS / 1000} seconds.
      </p>
      <LoadError error={error} />
      {status && <Verdict status={status} />}
      {status && (status.redis ? <Redis redis={status.redis} /> : <InMemory />)}
    </section>
  );
}

function Verdict({ status }: { status: Readiness }) {
  return (
    <dl class="totals">
      <div>
        <dt>Gateway</dt>
        <dd>{status.status === 'ready' ? (status.store ? 'ready, serving without its store' : 'ready') : `not ready: ${status.reason}`}</dd>
      </div>
      {status.status === 'ready' && (
        <div>
          <dt>Routing snapshot</dt>
          <dd>
            {status.snapshot}, {status.routers} router{status.routers === 1 ? '' : 's'}
          </dd>
        </div>
      )}
    </dl>
  );
}

function InMemory() {
  return (
    <section aria-labelledby="store">
      <h2 id="store">Store</h2>
      <p>In this gateway's memory: users, budgets and usage are its own, and lost when it stops.</p>
    </section>
  );
}

function Redis({ redis }: { redis: RedisStatus }) {
  const bound = redis.durability;
  return (
    <section aria-labelledby="redis">
      <h2 id="redis">Redis</h2>
      <dl class="totals">
        <div>
          <dt>Mode</dt>
          <dd>{MODES[redis.mode]}</dd>
        </div>
        {redis.mode !== 'cluster' && (
          <div>
            <dt>Primary</dt>
            <dd>{redis.primary ?? 'not connected'}</dd>
          </div>
        )}
        <div>
          <dt>Failover loss bound</dt>
          <dd>{bound ? `on: ${bound.wait_replicas} replica${bound.wait_replicas === 1 ? ' confirms' : 's confirm'} each write` : 'off'}</dd>
        </div>
        {bound && (
          <div>
            <dt>Settlements being sent again</dt>
            <dd>{bound.pending_settlements}</dd>
          </div>
        )}
      </dl>
      {bound && (
        <p class="hint">
          Not confirmed in time since this gateway started: {bound.unconfirmed.admission} admissions (answered 503),{' '}
          {bound.unconfirmed.settlement} settlement tries (sent again), {bound.unconfirmed.change} changes (answered 503).
        </p>
      )}
      {redis.mode === 'cluster' ? <Shards shards={redis.shards} /> : <Replicas replicas={redis.replicas} />}
    </section>
  );
}

const MODES: Record<RedisStatus['mode'], string> = { single: 'one address', sentinel: 'behind Sentinel', cluster: 'Redis Cluster' };

function Replicas({ replicas }: { replicas: RedisStatus['replicas'] }) {
  return (
    <>
      <h3>Replicas</h3>
      {replicas === null && <p>Not read yet (or this Redis does not answer INFO).</p>}
      {replicas?.length === 0 && <p>None: a failover would have nothing to promote.</p>}
      {replicas && replicas.length > 0 && (
        <ListTable caption="Replicas" columns={['Replica', 'State', num('Lag (s)'), num('Behind (bytes)')]}>
          {replicas.map((r) => (
            <tr key={r.address}>
              <th scope="row">{r.address}</th>
              <td>{r.state}</td>
              <td class="num">{r.lag_seconds}</td>
              <td class="num">{r.behind_bytes}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </>
  );
}

/** A cluster's primaries, each with its slots and its replicas (a primary without one would lose its slots if it failed). */
function Shards({ shards }: { shards: RedisStatus['shards'] }) {
  return (
    <>
      <h3>Primaries</h3>
      {shards === undefined && <p>Not read yet.</p>}
      {shards && (
        <ListTable caption="Primaries" columns={['Primary', 'Hash slots', 'Replicas']}>
          {shards.map((shard) => (
            <tr key={shard.primary}>
              <th scope="row">{shard.primary}</th>
              <td>{shard.slots.join(', ')}</td>
              <td>
                {shard.replicas.length === 0
                  ? 'none'
                  : shard.replicas.map((r) => `${r.address} (${r.state}, ${r.lag_seconds} s, ${r.behind_bytes} bytes behind)`).join('; ')}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </>
  );
}
