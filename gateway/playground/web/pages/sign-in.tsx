// Sign in with single sign-on (a link to the gateway's /auth/login, which sends the browser to the
// identity provider and back with a session cookie), or with an API key: checked with GET /v1/me
// before it is kept (in sessionStorage only). The gateway says which it offers (/auth/options).
import { call, type Me, type SignInOptions } from '../api.ts';
import { FormShell, TextField, useForm } from '../forms.tsx';
import { required, check } from '../rules.ts';

export function SignInPage(props: { notice: string | null; options: SignInOptions; onSignIn: (key: string, me: Me) => void }) {
  const sso = props.options.single_sign_on;
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
      {sso && (
        <p>
          <a class="button primary" href={`${sso.login_url}?return_to=${encodeURIComponent(`${location.pathname}${location.hash}`)}`}>
            Sign in with {sso.issuer}
          </a>
        </p>
      )}
      {props.options.key_sign_in && (
        <FormShell form={form} label="Sign in" onSubmit={submit} submitLabel={sso ? 'Sign in with a key' : 'Sign in'}>
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
      )}
    </main>
  );
}
