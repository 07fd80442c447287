// What a sign-in's start is given, made safe once at /auth/login (sign-in.ts): where to return
// once signed in, and the client it is counted against for the bound on sign-ins under way.

/** Where a sign-in returns when it was given nowhere safe. */
export const PLAYGROUND_PATH = '/playground/';

/** A C0 control or DEL: a browser's URL parser drops tabs and newlines (`/\t/host` is `//host`), and CR or LF cannot go in a header. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * The path (with query and fragment) of `returnTo` read as a browser reads a Location against
 * the gateway's `origin`: kept only when it stays on that origin and holds no control character,
 * else the Playground's. What is kept is as the URL parser writes it (percent-encoded), so it is
 * safe in a header.
 */
export function returnPath(returnTo: string | undefined, origin: string): string {
  if (returnTo === undefined || hasControl(returnTo)) return PLAYGROUND_PATH;
  let url: URL;
  try {
    url = new URL(returnTo, origin);
  } catch {
    return PLAYGROUND_PATH;
  }
  return url.origin === origin ? `${url.pathname}${url.search}${url.hash}` : PLAYGROUND_PATH;
}

/**
 * The client a sign-in is counted against: an IPv4 address, or an IPv6 address's /64 (one
 * machine's usual share, so it cannot spread over its whole block). `address` is a socket's
 * (Node writes IPv6 in its short form, an IPv4 one reached over IPv6 as `::ffff:a.b.c.d`).
 */
export function signInClient(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0]!; // a zone (`fe80::1%eth0`)
  const [head = '', tail] = bare.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
