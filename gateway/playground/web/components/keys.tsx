// API keys of one user: the list, with each key's own budget and what it has left (revoke with a
// confirmation), and a form that creates a key, with a budget of its own if wanted, and shows its
// secret once. Used by Account (`/v1/me/keys`) and by an admin's user page
// (`/v1/admin/users/{id}/keys`). A person signed in with single sign-on makes no key for
// themselves (the gateway refuses: a key would keep the role their groups give today), so the
// form is replaced by a sentence saying so.
import { useEffect, useState } from 'preact/hooks';
import type { ApiKey, KeyList, NewApiKey } from '../api.ts';
import { useSession } from '../context.ts';
import { FormShell, TextField, useForm } from '../forms.tsx';
import { money, utcTime } from '../format.ts';
import { readable } from '../messages.ts';
import { readAfterWrite } from '../read-after-write.ts';
import { check, decimal, futureDate, required } from '../rules.ts';
import { ConfirmButton } from './confirm.tsx';
import { ListTable, num } from './list-table.tsx';
import { LoadError } from './notice.tsx';

/** The largest page the API gives. */
const KEYS_PAGE = 500;

export function KeysPanel(props: { base: string; currentKeyId?: string; ownWithSignIn?: boolean }) {
  const session = useSession();
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const form = useForm('new-key', { name: '', expires: '', budget: '' });

  /** Every key: the list comes in pages (`next`), and a user may hold more keys than one page. */
  const read = async () => {
    const keys: ApiKey[] = [];
    let after: string | null | undefined;
    do {
      const query = `?limit=${KEYS_PAGE}${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const page = await session.call<KeyList>('GET', props.base + query);
      keys.push(...page.data);
      after = page.next;
    } while (after);
    return keys;
  };
  const load = () => read().then(setKeys, (e) => setError(readable(e)));
  useEffect(() => {
    load();
  }, [props.base]);
  /** Says `done` and shows the list once it has the write (keys are on Redis: at once, today). */
  const reload = (done: string) => readAfterWrite(session, done, keys, read).then(setKeys, (e) => setError(readable(e)));

  const create = () =>
    form.submit(
      (v) => ({
        name: check(v.name, [required]) ?? undefined,
        expires: check(v.expires, [futureDate], true) ?? undefined,
        budget: check(v.budget, [decimal(6)], true) ?? undefined,
      }),
      async (v) => {
        const key = await session.call<NewApiKey>('POST', props.base, {
          name: v.name.trim(),
          expires_at: v.expires ? `${v.expires}T00:00:00Z` : null,
          budget: v.budget.trim() === '' ? null : v.budget.trim(),
        });
        setCreated(key);
        form.reset({ name: '', expires: '', budget: '' });
        await reload(`Key "${key.name}" created. Copy it now: it is shown only once.`);
      },
      { name: 'name', expires_at: 'expires', budget: 'budget' },
    );

  const revoke = async (key: ApiKey) => {
    try {
      await session.call('DELETE', `${props.base}/${encodeURIComponent(key.id)}`);
      if (created?.id === key.id) setCreated(null);
      await reload(`Key "${key.name}" revoked.`);
    } catch (e) {
      setError(readable(e));
    }
  };

  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <LoadError error={error} />
      {created && <SecretReveal created={created} onDone={() => setCreated(null)} />}
      {keys && keys.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && (
        <ListTable
          caption="API keys"
          columns={['Name', 'Key', 'Created', 'Expires', 'Status', num('Key budget'), num('Spent'), num('Remaining')]}
          actions
        >
          {keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.hint}</code>
                {key.id === props.currentKeyId && <span class="tag">this session</span>}
              </td>
              <td>{utcTime(key.created_at)}</td>
              <td>{key.expires_at ? utcTime(key.expires_at) : 'never'}</td>
              <td>{key.revoked_at ? `revoked ${utcTime(key.revoked_at)}` : 'active'}</td>
              <td class="num">{key.budget === null ? 'none' : money(key.budget)}</td>
              <td class="num">{key.spend ? money(key.spend.spent) : ''}</td>
              <td class="num">{key.spend ? money(key.spend.remaining) : ''}</td>
              <td>
                {!key.revoked_at && (
                  <ConfirmButton
                    label={`Revoke ${key.name}`}
                    question={
                      key.id === props.currentKeyId
                        ? 'This is the key you are signed in with; revoking it signs you out.'
                        : `Revoke key "${key.name}"?`
                    }
                    confirmLabel="Yes, revoke"
                    onConfirm={() => revoke(key)}
                  />
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <h3>New key</h3>
      {props.ownWithSignIn ? (
        <p class="hint">
          Signed in with single sign-on, you make no API key for yourself: a key would keep the role your groups give today after they
          change. Ask an admin for a key for a program.
        </p>
      ) : (
        <FormShell form={form} label="New API key" onSubmit={create} submitLabel="Create key">
          <div class="row">
            <TextField form={form} name="name" label="Key name" required hint="What the key is for, such as “laptop” or “ci”." />
            <TextField form={form} name="expires" label="Expires on (optional)" type="date" hint="At 00:00 UTC that day. Empty: never." />
            <TextField
              form={form}
              name="budget"
              label="Key budget (optional)"
              inputMode="decimal"
              hint="This key's own, within the user's: one key per application. Empty: none."
            />
          </div>
        </FormShell>
      )}
    </section>
  );
}

/** The secret of a new key, shown once, focused so it can be copied at once. */
function SecretReveal({ created, onDone }: { created: NewApiKey; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <section class="secret" aria-labelledby="secret-heading">
      <h3 id="secret-heading">New key “{created.name}”: copy it now</h3>
      <p>This is the only time the gateway shows it. It keeps only a hash.</p>
      <label for="secret-value">Secret key</label>
      <input id="secret-value" class="mono" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
      <div class="actions">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          Done, hide it
        </button>
      </div>
    </section>
  );
}
