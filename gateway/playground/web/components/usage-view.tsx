// Request history (spec 2.6): filters by UTC day range and model, totals over everything the
// filter matches, a page of records with next/previous, and the spend-per-day chart. `user`
// is set when an admin reads someone else's usage.
import { useEffect, useState } from 'preact/hooks';
import { query, type DailyUsage, type Model, type ModelList, type UsagePage } from '../api.ts';
import { useSession } from '../context.ts';
import { FormShell, SelectField, TextField, useForm } from '../forms.tsx';
import { cachedNote, co2, kwh, milliseconds, money, tokens, utcTime } from '../format.ts';
import { readable } from '../messages.ts';
import { ListTable, num } from './list-table.tsx';
import { LoadError } from './notice.tsx';
import { SpendChart } from './spend-chart.tsx';
import { DAY_MS } from '../../../../core/time.ts';

const PAGE_SIZE = 20;
/** /v1/usage/daily covers at most this many days. */
const MAX_CHART_DAYS = 366;

interface Filter {
  readonly from: string;
  readonly to: string;
  readonly model: string;
}

export function UsageView({ user }: { user?: string }) {
  const session = useSession();
  const [models, setModels] = useState<Model[]>([]);
  const [filter, setFilter] = useState<Filter>({ from: '', to: '', model: '' });
  // Cursors of the pages before the current one, so "Previous" can go back.
  const [cursors, setCursors] = useState<(string | undefined)[]>([]);
  const [after, setAfter] = useState<string | undefined>(undefined);
  const [page, setPage] = useState<UsagePage | null>(null);
  const [daily, setDaily] = useState<DailyUsage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm(user ? `usage-${user}` : 'usage', { from: '', to: '', model: '' });

  useEffect(() => {
    session
      .call<ModelList>('GET', '/v1/models')
      .then((list) => setModels(list.data))
      .catch(() => setModels([]));
  }, []);

  useEffect(() => {
    setError(null);
    const range = {
      from: filter.from ? `${filter.from}T00:00:00Z` : undefined,
      // A day picked as "to" is included whole.
      to: filter.to ? `${filter.to}T23:59:59.999Z` : undefined,
    };
    session
      .call<UsagePage>('GET', `/v1/usage${query({ ...range, model: filter.model, user, limit: String(PAGE_SIZE), after })}`)
      .then(setPage)
      .catch((e) => setError(readable(e)));
  }, [filter, after, user]);

  useEffect(() => {
    if (chartDays(filter) > MAX_CHART_DAYS) {
      setDaily(null);
      return;
    }
    session
      .call<DailyUsage>('GET', `/v1/usage/daily${query({ from: filter.from || undefined, to: filter.to || undefined, user })}`)
      .then(setDaily)
      .catch(() => setDaily(null));
  }, [filter.from, filter.to, user]);

  const apply = () =>
    form.submit(
      (v) => ({ to: v.from && v.to && v.to < v.from ? 'Must not be before “From”.' : undefined }),
      async (v) => {
        setCursors([]);
        setAfter(undefined);
        setFilter({ from: v.from, to: v.to, model: v.model });
        session.announce('Usage filtered.');
      },
      {},
    );

  const modelOptions: [string, string][] = [['', 'All models'], ...models.map((m): [string, string] => [m.id, m.id])];
  return (
    <div class="usage-view">
      <FormShell form={form} label="Filter usage" onSubmit={apply} submitLabel="Apply filter">
        <div class="row">
          <TextField form={form} name="from" label="From (UTC day)" type="date" />
          <TextField form={form} name="to" label="To (UTC day, included)" type="date" />
          <SelectField form={form} name="model" label="Model" options={modelOptions} />
        </div>
      </FormShell>
      <LoadError error={error} />
      {page && <TotalsList totals={page.totals} />}
      {daily ? (
        <SpendChart daily={daily} />
      ) : (
        <p class="hint">The chart covers at most {MAX_CHART_DAYS} days; narrow the range to see it.</p>
      )}
      {page && (
        <section aria-labelledby="records-heading">
          <h2 id="records-heading">Requests</h2>
          {page.data.length === 0 ? (
            <p>No requests match.</p>
          ) : (
            <ListTable
              class="records"
              caption="Requests, newest first"
              columns={[
                'Time',
                'Model',
                num('Tokens (prompt + completion)'),
                num('Cost'),
                num('Energy'),
                num('Emissions'),
                num('Status'),
                num('Latency'),
              ]}
            >
              {page.data.map((r) => (
                <tr key={r.id}>
                  <td>{utcTime(r.time)}</td>
                  <td>{r.model}</td>
                  <td class="num">
                    {tokens(r.prompt_tokens)}
                    {cachedNote(r.cached_tokens)} + {tokens(r.completion_tokens)} = {tokens(r.total_tokens)}
                  </td>
                  <td class="num">
                    {money(r.cost)}
                    {r.uncovered ? ` (${money(r.uncovered)} over budget)` : ''}
                  </td>
                  <td class="num">{kwh(r.kwh)}</td>
                  <td class="num">{co2(r.kgco2eq)}</td>
                  <td class="num">
                    <span class={r.status >= 400 ? 'status-bad' : 'status-ok'}>{r.status}</span>
                    {r.incomplete && ' (cut short)'}
                  </td>
                  <td class="num">{milliseconds(r.latency_ms)}</td>
                </tr>
              ))}
            </ListTable>
          )}
          <nav class="pager" aria-label="Usage pages">
            <button
              type="button"
              disabled={cursors.length === 0}
              onClick={() => {
                setAfter(cursors.at(-1));
                setCursors(cursors.slice(0, -1));
              }}
            >
              Previous page
            </button>
            <span>Page {cursors.length + 1}</span>
            <button
              type="button"
              disabled={!page.next}
              onClick={() => {
                setCursors([...cursors, after]);
                setAfter(page.next ?? undefined);
              }}
            >
              Next page
            </button>
          </nav>
        </section>
      )}
    </div>
  );
}

function chartDays(filter: Filter): number {
  const to = filter.to ? Date.parse(filter.to) : Date.now();
  const from = filter.from ? Date.parse(filter.from) : to - 29 * DAY_MS;
  return Math.round((to - from) / DAY_MS) + 1;
}

function TotalsList({ totals }: { totals: UsagePage['totals'] }) {
  return (
    <section aria-labelledby="totals-heading">
      <h2 id="totals-heading">Totals</h2>
      <dl class="totals">
        <div>
          <dt>Requests</dt>
          <dd>{tokens(totals.requests)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{tokens(totals.total_tokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>
            {money(totals.cost)}
            {totals.uncovered ? ` (${money(totals.uncovered)} over budget)` : ''}
          </dd>
        </div>
        <div>
          <dt>Energy</dt>
          <dd>{kwh(totals.kwh)}</dd>
        </div>
        <div>
          <dt>Emissions</dt>
          <dd>{co2(totals.kgco2eq)}</dd>
        </div>
      </dl>
    </section>
  );
}
