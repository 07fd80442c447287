// The shell: sign-in until a key is accepted or a single sign-on session found, then the header, the navigation (admin pages only
// for admins; the server enforces it anyway), the page of the current hash and a live region.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiFailure, call, signInOptions, signOutOfSession, type Me, type SignInOptions } from './api.ts';
import { SessionContext, type Session } from './context.ts';
import { readable } from './messages.ts';
import { href, useRoute, type Route } from './routes.ts';
import { forgetKey, storedKey, storeKey } from './session.ts';
import { SignInPage } from './pages/sign-in.tsx';
import { ChatPage } from './pages/chat.tsx';
import { TranscribePage } from './pages/transcribe.tsx';
import { AccountPage } from './pages/account.tsx';
import { UsagePage } from './pages/usage.tsx';
import { RoutersPage } from './pages/routers.tsx';
import { ProvidersPage } from './pages/providers.tsx';
import { UsersPage } from './pages/users.tsx';
import { TeamsPage } from './pages/teams.tsx';
import { UserPage } from './pages/user.tsx';
import { StatusPage } from './pages/status.tsx';

/** Who sees a page: everyone, admins and team admins (`manager`), or admins. The server enforces it anyway. */
type Access = 'all' | 'manager' | 'admin';

const PAGES = [
  { page: 'chat', label: 'Chat', access: 'all' },
  { page: 'transcribe', label: 'Transcribe', access: 'all' },
  { page: 'usage', label: 'Usage', access: 'all' },
  { page: 'account', label: 'Account', access: 'all' },
  { page: 'routers', label: 'Routers', access: 'admin' },
  { page: 'providers', label: 'Providers', access: 'admin' },
  { page: 'teams', label: 'Teams', access: 'manager' },
  { page: 'users', label: 'Users', access: 'manager' },
  { page: 'status', label: 'Status', access: 'admin' },
] as const satisfies readonly { page: string; label: string; access: Access }[];

/** What a role may open. */
function allows(role: Me['role'], access: Access): boolean {
  return access === 'all' || role === 'admin' || (access === 'manager' && role === 'team_admin');
}

export function App() {
  // The key is '' when signed in with single sign-on: the session's cookie goes with each request.
  const [signedIn, setSignedIn] = useState<{ key: string; me: Me } | null>(null);
  const [checking, setChecking] = useState(true);
  const [options, setOptions] = useState<SignInOptions>({ single_sign_on: null, key_sign_in: true });
  const [notice, setNotice] = useState<string | null>(null);

  // A key kept from earlier in this tab's session is checked again before it is used; without
  // one, a single sign-on session (its cookie) is looked for.
  useEffect(() => {
    const key = storedKey();
    const check = async () => {
      const offered = await signInOptions();
      setOptions(offered);
      if (key !== null) {
        try {
          setSignedIn({ key, me: await call<Me>(key, 'GET', '/v1/me') });
        } catch (error) {
          forgetKey();
          setNotice(readable(error));
        }
      } else if (offered.single_sign_on) {
        try {
          setSignedIn({ key: '', me: await call<Me>('', 'GET', '/v1/me') });
        } catch {
          // No session (or it ended): the sign-in page.
        }
      }
    };
    check().finally(() => setChecking(false));
  }, []);

  const signIn = (key: string, me: Me) => {
    storeKey(key);
    setNotice(null);
    setSignedIn({ key, me });
  };
  const signOut = (reason: string | null) => {
    if (signedIn?.key === '') void signOutOfSession();
    forgetKey();
    setSignedIn(null);
    setNotice(reason);
  };

  if (checking) return <p class="loading">Checking your sign-in…</p>;
  if (!signedIn) return <SignInPage notice={notice} options={options} onSignIn={signIn} />;
  return (
    <SignedIn
      key={signedIn.key}
      apiKey={signedIn.key}
      me={signedIn.me}
      onMe={(me) => setSignedIn({ key: signedIn.key, me })}
      onSignOut={signOut}
    />
  );
}

function SignedIn(props: { apiKey: string; me: Me; onMe: (me: Me) => void; onSignOut: (reason: string | null) => void }) {
  const route = useRoute();
  const [status, setStatus] = useState('');
  const { apiKey, me } = props;
  // A message belongs to the page it was said on.
  useEffect(() => setStatus(''), [route.page, route.arg]);
  const session = useMemo<Session>(
    () => ({
      key: apiKey,
      me,
      async call<T>(method: string, path: string, body?: unknown) {
        try {
          return await call<T>(apiKey, method, path, body);
        } catch (error) {
          // A key revoked or expired meanwhile (or the user deleted): back to sign-in, with why.
          if (error instanceof ApiFailure && error.status === 401) props.onSignOut(`You were signed out. ${readable(error)}`);
          throw error;
        }
      },
      announce: setStatus,
      async refreshMe() {
        props.onMe(await call<Me>(apiKey, 'GET', '/v1/me'));
      },
    }),
    [apiKey, me],
  );
  const pages = PAGES.filter((p) => allows(me.role, p.access));
  const current = route.page === 'user' ? 'users' : route.page;

  return (
    <SessionContext.Provider value={session}>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link to #main; the handler only keeps the hash router from reading #main as a page */}
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <p class="brand">Tollgate Playground</p>
        <nav aria-label="Pages">
          <ul>
            {pages.map((p) => (
              <li key={p.page}>
                <a href={href(p.page)} aria-current={current === p.page ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            {me.name} <span class="role">({me.role})</span>
          </span>
          <button
            type="button"
            onClick={() => props.onSignOut(apiKey === '' ? 'You signed out.' : 'You signed out. The key was removed from this browser.')}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} role={me.role} />
      </main>
      <div class="status" role="status" aria-live="polite">
        {status || null}
      </div>
    </SessionContext.Provider>
  );
}

function Page({ route, role }: { route: Route; role: Me['role'] }) {
  const heading = useRef<HTMLDivElement>(null);
  // After navigating, focus goes to the page so that a screen reader starts there.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    heading.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route.page, route.arg]);
  return <div ref={heading}>{pageFor(route, role)}</div>;
}

function pageFor(route: Route, role: Me['role']) {
  switch (route.page) {
    case 'chat':
      return <ChatPage />;
    case 'transcribe':
      return <TranscribePage />;
    case 'usage':
      return <UsagePage />;
    case 'account':
      return <AccountPage />;
  }
  const page = PAGES.find((p) => p.page === (route.page === 'user' ? 'users' : route.page));
  if (page && !allows(role, page.access)) return <NotFound text="This page is for admins." />;
  switch (route.page) {
    case 'routers':
      return <RoutersPage />;
    case 'providers':
      return <ProvidersPage />;
    case 'teams':
      return <TeamsPage />;
    case 'users':
      return <UsersPage />;
    case 'user':
      return route.arg ? <UserPage key={route.arg} id={route.arg} /> : <UsersPage />;
    case 'status':
      return <StatusPage />;
  }
  return <NotFound text={`There is no page "${route.page}".`} />;
}

function NotFound({ text }: { text: string }) {
  return (
    <section>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        {text} <a href={href('chat')}>Go to Chat</a>.
      </p>
    </section>
  );
}

/** The skip link's target is in the same document; without this the hash router would see "#main". */
function skipToMain(event: Event) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}
