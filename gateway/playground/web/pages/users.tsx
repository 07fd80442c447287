// Users (admin): everyone who may call the gateway, with budget and spend; a form to add one.
// Each user's own page (keys, usage, edit) is under #/user/<id>.
import { useEffect, useState } from 'preact/hooks';
import type { User, UserList } from '../api.ts';
import { useSession } from '../context.ts';
import { FormShell, useForm } from '../forms.tsx';
import { money } from '../format.ts';
import { readable } from '../messages.ts';
import { readAfterWrite } from '../read-after-write.ts';
import { href } from '../routes.ts';
import { ListTable, num } from '../components/list-table.tsx';
import { LoadError } from '../components/notice.tsx';
import { EMPTY_USER, USER_PARAMS, UserFields, userBody, validateUser, type UserField } from '../components/user-form.tsx';

export function UsersPage() {
  const session = useSession();
  const [users, setUsers] = useState<User[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<User | null>(null);
  const form = useForm<UserField>('user', EMPTY_USER);

  const read = async (after: string | null) => {
    const page = await session.call<UserList>('GET', `/v1/admin/users?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    return { data: page.data, next: page.next };
  };
  /** Shows a page read, after the ones shown if it follows them. */
  const show = async (page: ReturnType<typeof read>, after: string | null = null) => {
    try {
      const { data, next } = await page;
      setUsers((current) => (after && current ? [...current, ...data] : data));
      setNext(next);
    } catch (e) {
      setError(readable(e));
    }
  };
  const load = (after: string | null = null) => show(read(after), after);
  useEffect(() => {
    load();
  }, []);

  const create = () =>
    form.submit(
      validateUser,
      async (v) => {
        const user = await session.call<User>('POST', '/v1/admin/users', { ...(v.id.trim() ? { id: v.id.trim() } : {}), ...userBody(v) });
        setCreated(user);
        form.reset(EMPTY_USER);
        // The first page again, once it has the new user (in Kubernetes mode, a moment later).
        await show(readAfterWrite(session, `User "${user.name}" created with id ${user.id}.`, { data: users, next }, () => read(null)));
      },
      USER_PARAMS,
    );

  return (
    <section>
      <h1 tabIndex={-1}>Users</h1>
      <LoadError error={error} />
      {users && (
        <ListTable caption="Users" columns={['User', 'Id', 'Role', num('Budget'), 'Period', num('Spent'), num('Remaining')]}>
          {users.map((u) => (
            <tr key={u.id}>
              <th scope="row">
                <a href={href('user', u.id)}>{u.name}</a>
              </th>
              <td>
                <code>{u.id}</code>
              </td>
              <td>{u.role}</td>
              <td class="num">{money(u.budget)}</td>
              <td>{u.budget_period ?? 'none'}</td>
              <td class="num">{money(u.spent)}</td>
              <td class="num">{money(u.remaining)}</td>
            </tr>
          ))}
        </ListTable>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          More users
        </button>
      )}
      <h2>New user</h2>
      {created && (
        <p class="notice">
          Created <a href={href('user', created.id)}>{created.name}</a> (<code>{created.id}</code>). Open it to issue an API key.
        </p>
      )}
      <FormShell form={form} label="New user" onSubmit={create} submitLabel="Create user">
        <UserFields form={form} creating />
      </FormShell>
    </section>
  );
}
