// A hash router (#/chat, #/users/u-1): every page is index.html, so the gateway needs no route
// per page and a reload keeps the page.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  readonly page: string;
  /** The rest of the path, decoded (a user id). */
  readonly arg: string | null;
}

export function parseHash(hash: string): Route {
  const [page = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  return { page: page || 'chat', arg: rest.length ? decodeURIComponent(rest.join('/')) : null };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

export function href(page: string, arg?: string): string {
  return `#/${page}${arg === undefined ? '' : `/${encodeURIComponent(arg)}`}`;
}
