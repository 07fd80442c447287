// Teams (admins and team admins): each team's budget, what it spent and has left this period, its
// members and their keys; admins add teams here. A team admin sees their own team only (the API scopes it).
import { useEffect, useState } from 'preact/hooks';
import type { Team, TeamList } from '../api.ts';
import { useSession } from '../context.ts';
import { FormShell, SelectField, TextField, useForm } from '../forms.tsx';
import { money } from '../format.ts';
import { BUDGET_PERIODS, options } from '../kinds.ts';
import { readable } from '../messages.ts';
import { readAfterWrite } from '../read-after-write.ts';
import { href } from '../routes.ts';
import { check, decimal, required, resourceId } from '../rules.ts';
import { ListTable, num } from '../components/list-table.tsx';
import { LoadError } from '../components/notice.tsx';

type TeamField = 'id' | 'name' | 'budget' | 'period';
const EMPTY_TEAM = { id: '', name: '', budget: '', period: '' };

export function TeamsPage() {
  const session = useSession();
  const [teams, setTeams] = useState<Team[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm<TeamField>('team', EMPTY_TEAM);
  const admin = session.me.role === 'admin';

  const read = async () => (await session.call<TeamList>('GET', '/v1/admin/teams?limit=500')).data;
  useEffect(() => {
    read().then(setTeams, (e) => setError(readable(e)));
  }, []);

  const create = () =>
    form.submit(
      (v) => ({
        id: check(v.id.trim(), [required, resourceId]) ?? undefined,
        name: check(v.name, [required]) ?? undefined,
        budget: check(v.budget, [decimal(6)], true) ?? undefined,
      }),
      async (v) => {
        const team = await session.call<Team>('POST', '/v1/admin/teams', {
          id: v.id.trim(),
          name: v.name.trim(),
          budget: v.budget.trim() === '' ? null : v.budget.trim(),
          budget_period: v.period || null,
        });
        form.reset(EMPTY_TEAM);
        await readAfterWrite(session, `Team "${team.name}" created.`, teams, read).then(setTeams, (e) => setError(readable(e)));
      },
      { id: 'id', name: 'name', budget: 'budget', budget_period: 'period' },
    );

  return (
    <section>
      <h1 tabIndex={-1}>Teams</h1>
      <p class="lead">A team's users share its budget, besides their own. Spent and remaining are this period's.</p>
      <LoadError error={error} />
      {teams && teams.length === 0 && <p>No teams yet.</p>}
      {teams && teams.length > 0 && (
        <ListTable caption="Teams" columns={['Team', 'Id', num('Budget'), 'Period', num('Spent'), num('Remaining'), 'Members', 'Keys']}>
          {teams.map((t) => (
            <tr key={t.id}>
              <th scope="row">{t.name}</th>
              <td>
                <code>{t.id}</code>
              </td>
              <td class="num">{money(t.budget)}</td>
              <td>{t.budget_period ?? 'none'}</td>
              <td class="num">{money(t.spent)}</td>
              <td class="num">{money(t.remaining)}</td>
              <td>
                {t.members.length === 0
                  ? 'none'
                  : t.members.map((id, i) => (
                      <span key={id}>
                        {i > 0 && ', '}
                        <a href={href('user', id)}>{id}</a>
                      </span>
                    ))}
              </td>
              <td>
                {t.keys.length === 0 ? (
                  'none'
                ) : (
                  <ul class="plain">
                    {t.keys.map((k) => (
                      <li key={k.id}>
                        {k.user_id}: {k.name} <code>{k.hint}</code>
                        {k.budget !== null && ` (budget ${money(k.budget)})`}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {admin && (
        <>
          <h2>New team</h2>
          <FormShell form={form} label="New team" onSubmit={create} submitLabel="Create team">
            <div class="row">
              <TextField form={form} name="id" label="Id" required hint="Lowercase letters, digits and -." />
              <TextField form={form} name="name" label="Name" required />
            </div>
            <div class="row">
              <TextField form={form} name="budget" label="Budget" inputMode="decimal" hint="All its users together. Empty: unlimited." />
              <SelectField
                form={form}
                name="period"
                label="Budget period"
                options={[['', 'none (never resets)'], ...options(BUDGET_PERIODS)]}
              />
            </div>
          </FormShell>
        </>
      )}
    </section>
  );
}
