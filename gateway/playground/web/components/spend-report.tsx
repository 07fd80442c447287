// The spend report: every team's, user's, key's, router's or provider's totals over a range of UTC
// days, dearest first (GET /v1/usage/report), as far as the caller may see (admins everything,
// team admins their team, others themselves and their keys), the same as a CSV file to download,
// and the spend per day of one of them as a chart.
import { useEffect, useState } from 'preact/hooks';
import { failureOf, headers, query, type DailyUsage, type SpendGroup, type SpendReport } from '../api.ts';
import { useSession } from '../context.ts';
import { FormShell, SelectField, TextField, useForm } from '../forms.tsx';
import { co2, kwh, money, tokens } from '../format.ts';
import { readable } from '../messages.ts';
import { ListTable, num } from './list-table.tsx';
import { LoadError } from './notice.tsx';
import { SpendChart } from './spend-chart.tsx';

type Group = SpendGroup;

const LABELS: Record<Group, string> = { team: 'Team', user: 'User', key: 'API key', router: 'Router', provider: 'Provider' };

interface Asked {
  readonly group: Group;
  readonly from: string;
  readonly to: string;
}

export function SpendReportView() {
  const session = useSession();
  const [asked, setAsked] = useState<Asked>({ group: 'user', from: '', to: '' });
  const [report, setReport] = useState<SpendReport | null>(null);
  const [charted, setCharted] = useState<string | null>(null);
  const [daily, setDaily] = useState<DailyUsage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm('report', { group: 'user', from: '', to: '' });
  // Routers and providers count every team's requests: only admins may group by them.
  const groups: Group[] = session.me.role === 'admin' ? ['team', 'user', 'key', 'router', 'provider'] : ['team', 'user', 'key'];
  const path = (format: 'json' | 'csv') =>
    `/v1/usage/report${query({ group_by: asked.group, from: asked.from || undefined, to: asked.to || undefined, format })}`;

  useEffect(() => {
    setError(null);
    session
      .call<SpendReport>('GET', path('json'))
      .then((found) => {
        setReport(found);
        // The dearest is charted first.
        setCharted(found.data[0]?.[asked.group] ?? null);
      })
      .catch((e) => setError(readable(e)));
  }, [asked]);

  useEffect(() => {
    setDaily(null);
    if (charted === null || !report) return;
    session
      .call<DailyUsage>('GET', `/v1/usage/daily${query({ [asked.group]: charted, from: report.from, to: report.to })}`)
      .then(setDaily)
      .catch((e) => setError(readable(e)));
  }, [charted, report]);

  const apply = () =>
    form.submit(
      (v) => ({ to: v.from && v.to && v.to < v.from ? 'Must not be before “From”.' : undefined }),
      async (v) => {
        setAsked({ group: v.group as Group, from: v.from, to: v.to });
        session.announce('Spend report updated.');
      },
      {},
    );

  // The file needs the key in a header, which a plain link cannot send: fetched, then saved.
  const download = async () => {
    try {
      const response = await fetch(path('csv'), { headers: headers(session.key), cache: 'no-store' });
      if (!response.ok) throw await failureOf(response);
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = `usage-by-${asked.group}.csv`;
      link.click();
      URL.revokeObjectURL(url);
    } catch (e) {
      setError(readable(e));
    }
  };

  const label = LABELS[asked.group];
  return (
    <section aria-labelledby="report-heading" class="spend-report">
      <h2 id="report-heading">Spend report</h2>
      <FormShell form={form} label="Spend report" onSubmit={apply} submitLabel="Show report">
        <div class="row">
          <SelectField
            form={form}
            name="group"
            label="Group by"
            options={groups.map((g) => [g, LABELS[g].toLowerCase()] as [string, string])}
          />
          <TextField form={form} name="from" label="From (UTC day)" type="date" />
          <TextField form={form} name="to" label="To (UTC day, included)" type="date" />
        </div>
      </FormShell>
      <LoadError error={error} />
      {report && (
        <>
          <p>
            {report.from} to {report.to}: {tokens(report.totals.requests)} requests, {money(report.totals.cost)}.{' '}
            <button type="button" onClick={download}>
              Download CSV
            </button>
          </p>
          {report.data.length === 0 ? (
            <p>No usage in this range.</p>
          ) : (
            <ListTable
              caption={`Spend by ${asked.group}, dearest first`}
              columns={[label, num('Requests'), num('Tokens'), num('Cost'), num('Energy'), num('Emissions'), 'Per day']}
            >
              {report.data.map((row) => {
                const name = String(row[asked.group] ?? '');
                return (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td class="num">{tokens(row.requests)}</td>
                    <td class="num">{tokens(row.total_tokens)}</td>
                    <td class="num">{money(row.cost)}</td>
                    <td class="num">{kwh(row.kwh)}</td>
                    <td class="num">{co2(row.kgco2eq)}</td>
                    <td>
                      <button type="button" aria-pressed={charted === name} onClick={() => setCharted(name)}>
                        Chart {name}
                      </button>
                    </td>
                  </tr>
                );
              })}
            </ListTable>
          )}
          {daily && charted !== null && <SpendChart daily={daily} title={`Spend per day of ${label.toLowerCase()} ${charted}`} />}
        </>
      )}
    </section>
  );
}
