// Starts the tests' OpenID provider (oidc-provider/main.ts) as a process, with the users and
// clients given, and stops it; and signs a person in through its development pages the way a
// browser would, for tests that do not need one (Chromium drives the same pages in test/e2e).
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { spawnOwned } from './owned-process.ts';
import { PROCESS_START_MS } from './patience.ts';

const MAIN = fileURLToPath(new URL('./oidc-provider/main.ts', import.meta.url));

export interface OidcUser {
  readonly name: string;
  readonly email: string;
  readonly groups: string[];
}

export interface OidcProviderConfig {
  readonly clients: readonly { client_id: string; client_secret?: string; redirect_uris: string[] }[];
  readonly users: Readonly<Record<string, OidcUser>>;
}

export interface RunningOidcProvider {
  /** http://127.0.0.1:<port>: its issuer, and where its discovery document is. */
  readonly issuer: string;
  stop(): Promise<void>;
}

export async function startOidcProvider(config: OidcProviderConfig): Promise<RunningOidcProvider> {
  const child: ChildProcess = spawnOwned(process.execPath, [MAIN], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, NODE_ENV: 'test', OIDC_PROVIDER_CONFIG: JSON.stringify(config) },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the OpenID provider did not start within ${PROCESS_START_MS} ms:\n${stderr}`));
    }, PROCESS_START_MS);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening (\S+)$/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OpenID provider exited with code ${code}:\n${stderr}`));
    });
  });
  return {
    issuer,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Cookies by name, as a browser keeps them for one site (enough for these flows: no paths, no expiry). */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Signs `login` in at the gateway as a browser would: the gateway's /auth/login (or `start`), the provider's
 * login and consent pages, back to the gateway's callback. Returns the gateway's last answer (the
 * callback's: a redirect with the session cookie, or a page saying why not) and the gateway's
 * cookies.
 */
export async function signInThrough(
  gatewayUrl: string,
  login: string,
  start = '/auth/login',
): Promise<{ readonly answer: Response; readonly gateway: CookieJar }> {
  const gateway = new CookieJar();
  const provider = new CookieJar();
  const go = async (url: string, jar: CookieJar, init: RequestInit = {}) => {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: jar.header() } });
    jar.take(response);
    return response;
  };
  let response = await go(`${gatewayUrl}${start}`, gateway);
  let location = response.headers.get('location');
  for (let step = 0; step < 20 && location !== null; step++) {
    const url = new URL(location, response.url || gatewayUrl);
    if (url.href.startsWith(gatewayUrl)) return { answer: await go(url.href, gateway), gateway };
    response = await go(url.href, provider);
    if (response.status === 200) {
      // A page of the provider: its form (login, then consent), submitted.
      const html = await response.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&');
      const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
      if (!action || !prompt) throw new Error(`the provider showed a page with no form: ${html.slice(0, 500)}`);
      const form = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login, password: 'any' } : {}) });
      response = await go(new URL(action, url).href, provider, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
    }
    location = response.headers.get('location');
  }
  throw new Error(`the sign-in did not come back to the gateway (last status ${response.status})`);
}

/**
 * An identity file's content signing people in with `provider` as the client `tollgate`, answered
 * at `redirectUrl`; the groups claim `groups`, `platform` the admin group, unmapped groups
 * refused; `signIn` over its sign_in.
 */
export function signInIdentity(provider: RunningOidcProvider, redirectUrl: string, signIn: Record<string, unknown> = {}): object {
  return {
    issuers: [{ name: 'idp', issuer: provider.issuer, audiences: ['tollgate'], groups_claim: 'groups' }],
    admin_groups: ['platform'],
    unmapped: 'refuse',
    sign_in: {
      issuer: 'idp',
      client_id: 'tollgate',
      redirect_url: redirectUrl,
      scopes: ['openid', 'profile', 'email', 'groups'],
      ...signIn,
    },
  };
}
