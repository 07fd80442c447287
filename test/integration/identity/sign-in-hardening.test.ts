// Single sign-on's pages against what a review found (issue 46), with a real OpenID provider
// process and the gateway on Redis (and in memory where the store matters): sign-ins under way
// bounded per client address and in all, with a page saying so; a return_to that a browser would
// read as another site, or that holds CR or LF, returns to the Playground; a store that does not
// answer gives the sign-in page, not JSON; the provider's error text is logged, never shown.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { eventually } from '../../support/eventually.ts';
import { freePort } from '../../support/free-port.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { signInIdentity, signInThrough, startOidcProvider, type RunningOidcProvider } from '../../support/oidc-provider.ts';
import { HANG_MS } from '../../support/patience.ts';
import { centModel } from '../../support/priced-config.ts';
import { testBed } from '../../support/test-bed.ts';

const bed = testBed({ redis: true });
const CLIENT_SECRET = 'tollgate-client-secret-7c2e0b';
const CONFIG: GatewayConfig = {
  teams: [{ id: 'red', name: 'Red', budget: '1', oidc_groups: ['eng'] }],
  models: [centModel()],
};

let provider: RunningOidcProvider;
let dir: string;
let ports: number[];

before(async () => {
  ports = [await freePort(), await freePort()];
  provider = await startOidcProvider({
    clients: [
      {
        client_id: 'tollgate',
        client_secret: CLIENT_SECRET,
        redirect_uris: ports.map((port) => `http://127.0.0.1:${port}/auth/callback`),
      },
    ],
    users: { ann: { name: 'Ann Example', email: 'ann@example.com', groups: ['eng'] } },
  });
  dir = await mkdtemp(join(tmpdir(), 'tollgate-sso-hardening-'));
});
after(async () => {
  await provider?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function identityFile(port: number, signIn: Record<string, unknown> = {}): Promise<string> {
  const file = join(dir, `identity-${port}-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, JSON.stringify(signInIdentity(provider, `http://127.0.0.1:${port}/auth/callback`, signIn)));
  return file;
}

const gatewayAt = async (
  port: number,
  t: TestContext,
  options: { signIn?: Record<string, unknown>; store?: 'redis' | 'memory'; settings?: object } = {},
) =>
  bed.gateway(CONFIG, {
    t,
    store: options.store,
    settings: { port, identityFile: await identityFile(port, options.signIn), oidcClientSecret: CLIENT_SECRET, ...options.settings },
  });

/** A browser's GET of `path`, from the loopback address `from` (127.0.0.0/8 is all this machine's). */
function browserGet(
  url: string,
  path: string,
  from = '127.0.0.1',
  cookie = '',
): Promise<{ status: number; type: string; location: string; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { accept: 'text/html', ...(cookie ? { cookie } : {}) };
    const call = request(`${url}${path}`, { localAddress: from, headers }, (answer) => {
      let body = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      answer.on('end', () =>
        resolve({ status: answer.statusCode!, type: answer.headers['content-type'] ?? '', location: answer.headers.location ?? '', body }),
      );
    });
    call.on('error', reject).end();
  });
}

describe('single sign-on hardening', () => {
  // First in the file: its sign-ins stay under way (ten minutes), and no other test's are left to count.
  test('sign-ins under way are bounded per client address and in all: past either, /auth/login answers a 429 page (Redis and memory)', async (t) => {
    for (const [store, port] of [
      ['redis', ports[0]!],
      ['memory', ports[1]!],
    ] as const) {
      const gw = await gatewayAt(port, t, { store, signIn: { max_pending_sign_ins: 3, max_pending_sign_ins_per_client: 2 } });
      for (let i = 0; i < 2; i++) {
        const begun = await browserGet(gw.url, '/auth/login', '127.0.0.2');
        assert.equal(begun.status, 302, `${store}: ${begun.body}`);
        assert.ok(begun.location.startsWith(provider.issuer), begun.location);
      }
      const fromClient = await browserGet(gw.url, '/auth/login', '127.0.0.2');
      assert.equal(fromClient.status, 429, store);
      assert.match(fromClient.type, /text\/html/);
      assert.match(fromClient.body, /Too many sign-ins have been started from your address/);
      assert.equal((await browserGet(gw.url, '/auth/login', '127.0.0.3')).status, 302, `${store}: another address may begin one`);
      const inAll = await browserGet(gw.url, '/auth/login', '127.0.0.4');
      assert.equal(inAll.status, 429, store);
      assert.match(inAll.type, /text\/html/);
      assert.match(inAll.body, /Too many sign-ins are under way/);
      await gw.close();
    }
  });

  test('a return_to a browser reads as another site (a tab inside //, a backslash) returns to the Playground; a path of the gateway returns as the URL parser writes it', async (t) => {
    const gw = await gatewayAt(ports[0]!, t);
    for (const [returnTo, expected] of [
      ['/\t/evil.example', '/playground/'],
      ['/\t\t/evil.example/', '/playground/'],
      ['/\\/evil.example', '/playground/'],
      ['\\\\evil.example', '/playground/'],
      ['http://evil.example/', '/playground/'],
      ['/playground/?tab=usage#keys', '/playground/?tab=usage#keys'],
      ['/playground/café x', '/playground/caf%C3%A9%20x'],
    ] as const) {
      const { answer } = await signInThrough(gw.url, 'ann', `/auth/login?return_to=${encodeURIComponent(returnTo)}`);
      assert.equal(answer.status, 302, returnTo);
      assert.equal(answer.headers.get('location'), expected, returnTo);
    }
  });

  test('a return_to holding CR or LF returns to the Playground: the sign-in completes with its session cookie, no 500', async (t) => {
    const gw = await gatewayAt(ports[0]!, t);
    for (const returnTo of ['/playground/\r\nSet-Cookie: planted=1', '/a\nb', '/a\rb']) {
      const { answer, gateway: jar } = await signInThrough(gw.url, 'ann', `/auth/login?return_to=${encodeURIComponent(returnTo)}`);
      assert.equal(answer.status, 302, JSON.stringify(returnTo));
      assert.equal(answer.headers.get('location'), '/playground/', JSON.stringify(returnTo));
      const session = jar.get('tollgate_session');
      assert.ok(session, 'the session made is the one the browser holds');
      assert.equal((await gw.get('/v1/me', { authorization: '', cookie: `tollgate_session=${session}` })).status, 200);
    }
  });

  test('while Redis does not answer, /auth/login and /auth/callback answer a browser with the sign-in page and 503, not JSON', {
    timeout: HANG_MS,
  }, async (t) => {
    const gw = await gatewayAt(ports[0]!, t, { settings: { redisCommandTimeoutMs: 200 } });
    // The provider discovered first: what fails below is the store alone.
    const begun = await browserGet(gw.url, '/auth/login');
    assert.equal(begun.status, 302);
    const state = new URL(begun.location).searchParams.get('state')!;
    bed.redis.pause();
    try {
      for (const [path, cookie] of [
        ['/auth/login', ''],
        [`/auth/callback?code=x&state=${state}`, `tollgate_sign_in=${state}`],
      ] as const) {
        const answer = await browserGet(gw.url, path, '127.0.0.1', cookie);
        assert.equal(answer.status, 503, `${path}: ${answer.body}`);
        assert.match(answer.type, /text\/html/, path);
        assert.match(answer.body, /Sign-in failed/, path);
      }
    } finally {
      bed.redis.resume();
    }
  });

  test("the provider's error and error_description are logged at warn, never shown: the page says a fixed message", async (t) => {
    const port = ports[1]!;
    const gw = await bed.process(CONFIG, {
      t,
      args: ['--port', String(port), '--identity-file', await identityFile(port), '--admin-key', generateKey().secret],
      env: { TOLLGATE_OIDC_CLIENT_SECRET: CLIENT_SECRET },
    });
    const description = 'Your account is locked. Call +1-555-0100 to restore it';
    const answer = await browserGet(
      gw.url,
      `/auth/callback?error=access_denied&error_description=${encodeURIComponent(description)}&state=x`,
    );
    assert.equal(answer.status, 401);
    assert.match(answer.type, /text\/html/);
    assert.match(answer.body, /The identity provider did not sign you in\./);
    assert.ok(!answer.body.includes('555-0100'), answer.body);
    assert.ok(!answer.body.includes('access_denied'), answer.body);
    const logged = await eventually(
      () =>
        gw.output
          .flatMap((line) => {
            try {
              return [JSON.parse(line) as Record<string, unknown>];
            } catch {
              return [];
            }
          })
          .find((entry) => entry.provider_error_description === description),
      'the warning naming the provider error',
    );
    assert.equal(logged.level, 40);
    assert.equal(logged.provider_error, 'access_denied');
  });
});
