// A provider's secrets, kept out of what the gateway shows and relays: its base URL is shown with
// the credentials, the secret-looking query values and the fragment masked, and text that came
// back from a backend (an error body, an error event) has every secret the gateway sent it
// replaced by `***` before it reaches a client or a log line. A backend can only echo what it was
// sent, so the secrets of the request that failed are the ones to look for.

export const MASK = '***';

/**
 * Query parameter names whose value is masked: those that say key, token, password, signature,
 * credential and the like, in full or abbreviated (`tok`, `pw`, `sig`, `cred`, `priv`).
 */
const SECRET_NAME = /key|tok|secret|pass|pw|sig|auth|cred|session|code|jwt|bearer|hmac|priv|cookie|ticket/i;
/** A name this short (`k`, `p`, `t`, `pw`, `sk`) says nothing of its value, which is masked too. */
const SHORT_NAME = 2;

/** The authority ends at the first `/`, `?`, `#` or `\`, as WHATWG URL parsing reads it. */
const AUTHORITY_AND_PATH = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*[/\\]/i;

/** Whether a query parameter's value is masked, by its name as written (percent-encoded or not). */
function secretParam(written: string): boolean {
  let name = written;
  try {
    name = decodeURIComponent(written.replaceAll('+', ' '));
  } catch {
    // Not percent-encoded text: the name as it is.
  }
  return name.length > 0 && (name.length <= SHORT_NAME || SECRET_NAME.test(name));
}

/**
 * A query (`?` and what follows, as URL.search gives it) split into its parameters as written,
 * with the separators between them at the odd indices. Split at `;` as well as `&`: some servers
 * read `a=1;token=x` as two parameters, so its token is a secret too.
 */
function queryParts(search: string): string[] {
  return search === '' ? [] : search.slice(1).split(/([&;])/);
}

/** A parameter as written, split into its name and value (undefined: no `=`). */
function nameAndValue(part: string): [string, string | undefined] {
  const equals = part.indexOf('=');
  return equals < 0 ? [part, undefined] : [part.slice(0, equals), part.slice(equals + 1)];
}

/** The query with each secret parameter's value masked, whatever its length; the rest as written. */
function maskQuery(search: string): string {
  const parts = queryParts(search);
  for (let i = 0; i < parts.length; i += 2) {
    const [name] = nameAndValue(parts[i]!);
    if (secretParam(name)) parts[i] = `${name}=${MASK}`;
  }
  return parts.length === 0 ? '' : `?${parts.join('')}`;
}

/**
 * `https://user:p@ss@host/x?api_key=abc&v=1#t` is shown as `https://***@host/x?api_key=***&v=***#***`.
 * The URL is parsed as `fetch` would parse it, so the credentials are everything up to the LAST
 * `@` before the host; the user name is masked with the password, as it may be the key itself.
 * The fragment is never sent to the backend, but may hold a token pasted with the URL (OAuth's
 * implicit flow puts one there): it is shown as there, not what it holds. A URL without secrets
 * is returned as given.
 */
export function maskUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return MASK;
  }
  const credentials = url.username !== '' || url.password !== '';
  const search = maskQuery(url.search);
  const hash = url.hash === '' ? '' : `#${MASK}`;
  if (!credentials && search === url.search && hash === '') return text;
  // new URL() adds a `/` path to `http://host`; keep the address as it was written.
  const path = url.pathname === '/' && !AUTHORITY_AND_PATH.test(text) ? '' : url.pathname;
  return `${url.protocol}//${credentials ? `${MASK}@` : ''}${url.host}${path}${search}${hash}`;
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
    for (const part of queryParts(url.search)) {
      const [name, value] = nameAndValue(part);
      if (value !== undefined && secretParam(name)) add(value);
    }
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
