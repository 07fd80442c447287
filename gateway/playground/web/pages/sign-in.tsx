// Sign in with an API key: checked with GET /v1/me before it is kept (in sessionStorage only).
import { call, type Me } from '../api.ts';
import { FormShell, TextField, useForm } from '../forms.tsx';
import { required, check } from '../rules.ts';

export function SignInPage(props: { notice: string | null; onSignIn: (key: string, me: Me) => void }) {
  const form = useForm('sign-in', { key: '' });
  const submit = () =>
    form.submit(
      (v) => ({ key: check(v.key, [required]) ?? undefined }),
      async (v) => props.onSignIn(v.key.trim(), await call<Me>(v.key.trim(), 'GET', '/v1/me')),
      {},
    );
  return (
    <main id="main" class="sign-in">
      <h1>Tollgate Playground</h1>
      <p>
        Chat with the gateway's models, see what each request costs, and manage your keys. Admins also manage routers, providers and users.
      </p>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <FormShell form={form} label="Sign in" onSubmit={submit} submitLabel="Sign in">
        <TextField
          form={form}
          name="key"
          label="API key"
          type="password"
          required
          autocomplete="off"
          hint="A key such as tg-…, from your admin or from Account. It stays in this browser tab until you sign out or close it."
        />
      </FormShell>
    </main>
  );
}
