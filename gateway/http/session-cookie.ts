// The cookies of single sign-on (routes/sign-in.ts sets them, auth.ts reads the session's): their
// names, how they are written, and how one is read from a request.
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';

/** The session's secret: the whole gateway, as long as the session. */
export const SESSION_COOKIE = 'tollgate_session';
/** A sign-in under way's state: /auth only, ten minutes. */
export const SIGN_IN_COOKIE = 'tollgate_sign_in';

/** The value of one cookie of a request, if it sent it. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  return header === undefined ? undefined : parseCookie(header)[name];
}

/**
 * A Set-Cookie value: HttpOnly (no script reads it), SameSite=Lax (sent on the identity
 * provider's redirect back, not on another site's requests that change something), Secure unless
 * `secure` is false; an empty value with maxAge 0 removes the cookie.
 */
export function setCookie(name: string, value: string, options: { maxAge: number; path?: string; secure: boolean }): string {
  return stringifySetCookie({
    name,
    value,
    maxAge: options.maxAge,
    path: options.path ?? '/',
    httpOnly: true,
    secure: options.secure,
    sameSite: 'lax',
  });
}
