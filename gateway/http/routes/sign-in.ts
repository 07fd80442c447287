// Single sign-on's routes (issue 32; gateway/identity/sign-in.ts does the work): what the
// Playground may offer (/auth/options), the redirect to the identity provider (/auth/login), its
// answer (/auth/callback), and sign-out (/auth/logout). All are public: they are how one gets a
// session. A sign-in that cannot complete ends on a page saying why, with a way to start again.
// Cookies: the session's and the sign-in's (../session-cookie.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { SignIn } from '../../identity/sign-in.ts';
import { SIGN_IN_TTL_MS, SignInFailure } from '../../identity/sign-in.ts';
import { PUBLIC } from '../auth.ts';
import { SignInOptionsView } from '../views/sign-in.ts';
import { cookieOf, SESSION_COOKIE, setCookie, SIGN_IN_COOKIE } from '../session-cookie.ts';

export interface SignInRoutesOptions {
  readonly signIn: SignIn | undefined;
}

const Login = z.object({ return_to: z.string().max(2000).optional() });

export async function signInApi(app: FastifyInstance, options: SignInRoutesOptions): Promise<void> {
  const { signIn } = options;
  const cookie = (name: string, value: string, maxAge: number, path = '/') =>
    setCookie(name, value, { maxAge, path, secure: signIn?.cookieSecure ?? true });

  app.get('/auth/options', { config: PUBLIC }, async () =>
    SignInOptionsView.parse({
      single_sign_on: signIn ? { issuer: signIn.issuerName, login_url: '/auth/login' } : null,
      key_sign_in: signIn?.keySignIn ?? true,
    }),
  );
  if (!signIn) return;

  app.get('/auth/login', { config: PUBLIC }, async (request, reply) => {
    // A return_to that is not one string (given twice, too long) returns to the Playground; what one is, sign-in-start.ts decides.
    const login = Login.safeParse(request.query ?? {});
    try {
      const { url, state } = await signIn.begin(login.success ? login.data.return_to : undefined, request.ip);
      return reply
        .header('set-cookie', cookie(SIGN_IN_COOKIE, state, SIGN_IN_TTL_MS / 1000, '/auth'))
        .header('cache-control', 'no-store')
        .redirect(url.href, 302);
    } catch (error) {
      return failed(reply, error);
    }
  });

  app.get('/auth/callback', { config: PUBLIC }, async (request, reply) => {
    const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
    reply.header('set-cookie', cookie(SIGN_IN_COOKIE, '', 0, '/auth')).header('cache-control', 'no-store');
    try {
      const session = await signIn.finish(query, cookieOf(request, SIGN_IN_COOKIE));
      return reply.header('set-cookie', cookie(SESSION_COOKIE, session.secret, session.maxAgeSeconds)).redirect(session.returnTo, 302);
    } catch (error) {
      return failed(reply, error);
    }
  });

  app.post('/auth/logout', { config: PUBLIC }, async (request, reply) => {
    const secret = cookieOf(request, SESSION_COOKIE);
    if (secret !== undefined) await signIn.end(secret);
    return reply
      .header('set-cookie', cookie(SESSION_COOKIE, '', 0))
      .code(204)
      .send();
  });
}

/** A sign-in that could not complete: a page saying why, with a link to start again. */
function failed(reply: FastifyReply, error: unknown): FastifyReply {
  if (!(error instanceof SignInFailure)) throw error;
  return reply
    .code(error.status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'")
    .send(page(error.message));
}

function page(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Tollgate</title></head>
<body><main><h1>Sign-in failed</h1><p>${escapeHtml(message)}</p><p><a href="/auth/login">Sign in again</a> · <a href="/playground/">Playground</a></p></main></body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
