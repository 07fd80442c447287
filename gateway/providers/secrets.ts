// A provider's secrets, kept out of what the gateway shows and relays: its base URL is shown with
// the credentials and secret-looking query values masked, and text that came back from a backend
// (an error body, an error event) has every secret the gateway sent it replaced by `***` before
// it reaches a client or a log line. A backend can only echo what it was sent, so the secrets of
// the request that failed are the ones to look for.

export const MASK = '***';

/** Query parameters whose value is masked: names of keys, tokens, passwords and signatures. */
const SECRET_PARAM = /key|token|secret|pass|pwd|sig|auth|cred|session|code/i;

/** The authority ends at the first `/`, `?`, `#` or `\`, as WHATWG URL parsing reads it. */
const AUTHORITY_AND_PATH = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*[/\\]/i;

/**
 * `https://user:p@ss@host/x?api_key=abc&v=1` is shown as `https://***@host/x?api_key=***&v=1`.
 * The URL is parsed as `fetch` would parse it, so the credentials are everything up to the
 * LAST `@` before the host. A URL without secrets is returned as given.
 */
export function maskUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return MASK;
  }
  const credentials = url.username !== '' || url.password !== '';
  let secretQuery = false;
  for (const name of url.searchParams.keys()) if (SECRET_PARAM.test(name)) secretQuery = true;
  if (!credentials && !secretQuery) return text;
  let search = url.search;
  if (secretQuery) {
    const masked = new URLSearchParams();
    for (const [name, value] of url.searchParams) masked.append(name, SECRET_PARAM.test(name) ? MASK : value);
    search = `?${masked.toString().replaceAll('%2A', '*')}`;
  }
  // new URL() adds a `/` path to `http://host`; keep the address as it was written.
  const path = url.pathname === '/' && !AUTHORITY_AND_PATH.test(text) ? '' : url.pathname;
  return `${url.protocol}//${credentials ? `${MASK}@` : ''}${url.host}${path}${search}${url.hash}`;
}

/**
 * What of a request to a backend is secret: the values of the headers sent (the key, wherever it
 * appears, so also in `Bearer <key>`), the base URL's password and its secret-looking query values, each as written
 * and decoded. Longest first, so a secret that contains another is replaced whole.
 */
export function requestSecrets(baseUrl: string, headers: Readonly<Record<string, string>> | undefined): string[] {
  const secrets = new Set<string>();
  const add = (value: string) => {
    if (value === '') return;
    secrets.add(value);
    try {
      secrets.add(decodeURIComponent(value));
    } catch {
      // Not percent-encoded text: the value as it is was added.
    }
    secrets.add(encodeURIComponent(value));
  };
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'content-type' || name.toLowerCase() === 'accept') continue;
    // `Bearer <key>`: the key is the secret, and `Bearer ***` still says what was sent.
    const scheme = /^\s*\S+\s+(.+)$/.exec(value);
    add(scheme ? scheme[1]!.trim() : value);
  }
  try {
    const url = new URL(baseUrl);
    add(url.password);
    for (const [name, value] of url.searchParams) if (SECRET_PARAM.test(name)) add(value);
  } catch {
    // An address that does not parse was never sent.
  }
  return [...secrets].filter((s) => s.trim() !== '').sort((a, b) => b.length - a.length);
}

/** `text` with each of `secrets` replaced by `***`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let scrubbed = text;
  for (const secret of secrets) if (scrubbed.includes(secret)) scrubbed = scrubbed.replaceAll(secret, MASK);
  return scrubbed;
}
