// One user, for an admin: budget and spend, the edit form (name, role, budget, period), their
// API keys (issue, revoke) and their usage; and deleting them.
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, type User } from '../api.ts';
import { useSession } from '../context.ts';
import { FormShell, useForm } from '../forms.tsx';
import { readable } from '../messages.ts';
import { readAfterWrite, readUntilFound } from '../read-after-write.ts';
import { href } from '../routes.ts';
import { ConfirmButton } from '../components/confirm.tsx';
import { KeysPanel } from '../components/keys.tsx';
import { LoadError } from '../components/notice.tsx';
import { UsageView } from '../components/usage-view.tsx';
import { EMPTY_USER, USER_PARAMS, UserFields, userBody, userValues, validateUser, type UserField } from '../components/user-form.tsx';
import { BudgetSummary } from './account.tsx';

export function UserPage({ id }: { id: string }) {
  const session = useSession();
  const [user, setUser] = useState<User | null>(null);
  const [error, setError] = useState<string | null>(null);
  const form = useForm<UserField>('edit-user', EMPTY_USER);
  const path = `/v1/admin/users/${encodeURIComponent(id)}`;

  useEffect(() => {
    // Right after "Created …" on the Users page, the user may not be published yet (Kubernetes mode).
    let current = true;
    readUntilFound(() => session.call<User>('GET', path)).then(
      (u) => {
        if (!current) return;
        setUser(u);
        form.reset(userValues(u));
      },
      (e) => current && setError(readable(e)),
    );
    return () => {
      current = false;
    };
  }, [id]);

  const save = () =>
    form.submit(
      validateUser,
      async (v) => {
        const saved = await session.call<User>('PATCH', path, userBody(v));
        setUser(saved);
        form.reset(userValues(saved));
        session.announce(`User "${saved.name}" saved.`);
      },
      USER_PARAMS,
    );

  const remove = async () => {
    try {
      await session.call('DELETE', path);
      // Leave once the user is gone from what the gateway serves, so that Users no longer lists them.
      const exists = () =>
        session.call<User>('GET', path).then(
          () => true,
          (e) => (e instanceof ApiFailure && e.status === 404 ? false : Promise.reject(e)),
        );
      await readAfterWrite(session, `User "${id}" deleted.`, true, exists);
      location.hash = href('users');
    } catch (e) {
      setError(readable(e));
    }
  };

  return (
    <section>
      <p class="crumb">
        <a href={href('users')}>Users</a> /
      </p>
      <h1 tabIndex={-1}>{user ? `${user.name}` : `User ${id}`}</h1>
      <LoadError error={error} />
      {user && (
        <>
          <BudgetSummary user={user} />
          <h2>Edit user</h2>
          <FormShell form={form} label={`Edit user ${user.id}`} onSubmit={save} submitLabel="Save user">
            <UserFields form={form} creating={false} />
          </FormShell>
          <KeysPanel
            base={`${path}/keys`}
            currentKeyId={user.id === session.me.id ? session.me.key.id : undefined}
            ownWithSignIn={user.id === session.me.id && session.key === ''}
          />
          <section aria-labelledby="user-usage">
            <h2 id="user-usage">Usage of {user.name}</h2>
            <UsageView user={user.id} />
          </section>
          {user.id !== session.me.id && (
            <section aria-labelledby="danger">
              <h2 id="danger">Delete</h2>
              <p>Deleting a user also deletes their keys, budget state and usage records.</p>
              <ConfirmButton
                label={`Delete user ${user.name}`}
                question={`Delete "${user.name}" and all their data?`}
                confirmLabel="Yes, delete user"
                onConfirm={remove}
              />
            </section>
          )}
        </>
      )}
    </section>
  );
}
