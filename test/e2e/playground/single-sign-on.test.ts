// Single sign-on in the Playground, in Chromium, against a real OpenID provider (oidc-provider,
// run as a process, with its own keys and users): a person signs in through the provider's pages,
// lands on the pages their groups' role opens, chats within their team's budget, and a second
// gateway on the same Redis knows them without signing in again; signing out on one ends the
// session on both. A person whose groups map to no team is shown a page saying so.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { TestGateway } from '../../support/gateway.ts';
import { freePort } from '../../support/free-port.ts';
import { signInIdentity, startOidcProvider, type RunningOidcProvider } from '../../support/oidc-provider.ts';
import { testBed } from '../../support/test-bed.ts';
import { launchPlaygroundBrowser, screenshot, type PlaygroundBrowser } from './browser.ts';
import { goTo, navigationLinks, PAGES_OF, readFirstAnswer, sendChatMessage } from './steps.ts';

const bed = testBed({ redis: true });
const CLIENT_SECRET = 'tollgate-playground-secret-81c2';

let provider: RunningOidcProvider;
let browser: PlaygroundBrowser;
let dir: string;
let one: TestGateway;
let two: TestGateway;
/** The gateways as the browser reaches them: http://localhost:<port>, where Secure cookies are kept. */
let urls: [string, string];

before(async () => {
  const ports = [await freePort(), await freePort()] as const;
  urls = [`http://localhost:${ports[0]}`, `http://localhost:${ports[1]}`];
  provider = await startOidcProvider({
    clients: [{ client_id: 'tollgate', client_secret: CLIENT_SECRET, redirect_uris: urls.map((url) => `${url}/auth/callback`) }],
    users: {
      ann: { name: 'Ann Example', email: 'ann@example.com', groups: ['eng'] },
      lead: { name: 'Lea Lead', email: 'lead@example.com', groups: ['eng-leads'] },
      root: { name: 'Root Admin', email: 'root@example.com', groups: ['platform'] },
      stranger: { name: 'Stranger', email: 'stranger@example.com', groups: ['visitors'] },
    },
  });
  // First: it builds the Playground if its sources changed, and a gateway reads the build when it starts.
  browser = await launchPlaygroundBrowser();
  dir = await mkdtemp(join(tmpdir(), 'tollgate-sso-e2e-'));
  const gateways: TestGateway[] = [];
  for (const [i, port] of ports.entries()) {
    const file = join(dir, `identity-${i}.yaml`);
    await writeFile(file, JSON.stringify(signInIdentity(provider, `${urls[i]}/auth/callback`)));
    gateways.push(
      await bed.gateway(
        {
          teams: [{ id: 'red', name: 'Red team', budget: '50', oidc_groups: ['eng'], oidc_admin_groups: ['eng-leads'] }],
          models: [
            {
              id: 'priced',
              type: 'text-generation',
              costs: { prompt_tokens: 1000, completion_tokens: 1000 },
              providers: [{ model: 'sim', type: 'simulator' }],
            },
          ],
        },
        { settings: { port, identityFile: file, oidcClientSecret: CLIENT_SECRET } },
      ),
    );
  }
  [one, two] = gateways as [TestGateway, TestGateway];
});

after(async () => {
  await browser?.close();
  await provider?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Opens the Playground at `url` in a fresh browser (no cookies), reaching nothing off this machine. */
async function openPlayground(url: string): Promise<Page> {
  const { context, page } = await browser.open(url);
  // The provider's development pages import a web font: off this machine, so refused at once.
  await context.route(/^https:\/\//, (route) => route.abort());
  await page.goto('/playground/');
  return page;
}

/** On the sign-in page: single sign-on as `login`, through the provider's login and consent pages. */
async function signInAs(page: Page, login: string): Promise<void> {
  await page.getByRole('link', { name: 'Sign in with idp' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

describe('single sign-on in the Playground', () => {
  test('sign in through the provider, chat within the team budget, be known by a second gateway, sign out of both', async () => {
    const page = await openPlayground(urls[0]);
    await screenshot(page, 'sso-sign-in');
    await signInAs(page, 'ann');
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    assert.deepEqual(await navigationLinks(page), PAGES_OF.user);
    assert.match((await page.locator('.who').textContent()) ?? '', /Ann Example \(user\)/);
    assert.ok(!page.url().includes('code=') && !page.url().includes('state='), "the provider's answer is not left in the address bar");

    await sendChatMessage(page, 'priced', 'Hello');
    const { cost } = await readFirstAnswer(page);
    assert.match(cost, /^\$?0\.\d+/);
    const team = await one.get('/v1/admin/teams/red');
    assert.ok(team.body.spent > 0, "the request was charged to the team's budget");
    await screenshot(page, 'sso-chat');
    // No API key for oneself with single sign-on (the gateway refuses it): the form gives way to why.
    await goTo(page, 'Account');
    await page.getByText('Signed in with single sign-on, you make no API key for yourself').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);

    // The same browser at the second gateway: the session (in Redis) is known there.
    await page.goto(`${urls[1]}/playground/`);
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    assert.match((await page.locator('.who').textContent()) ?? '', /Ann Example/);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You signed out.').waitFor();
    await page.goto(`${urls[0]}/playground/`);
    await page.getByRole('link', { name: 'Sign in with idp' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Chat', level: 1 }).count(), 0, 'the first gateway ended the session too');
    assert.ok(two.url, 'the second gateway served');
  });

  test("the groups' role opens the pages: a team's admin group its team's pages, the admin group every page", async () => {
    const lead = await openPlayground(urls[0]);
    await signInAs(lead, 'lead');
    await lead.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    assert.deepEqual(await navigationLinks(lead), PAGES_OF.team_admin);

    const root = await openPlayground(urls[1]);
    await signInAs(root, 'root');
    await root.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
    assert.deepEqual(await navigationLinks(root), PAGES_OF.admin);
  });

  test('a person whose groups map to no team is shown a page saying so, and is not signed in', async () => {
    const page = await openPlayground(urls[0]);
    await signInAs(page, 'stranger');
    await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    assert.match((await page.locator('main').textContent()) ?? '', /None of your groups gives you a team on this gateway/);
    await screenshot(page, 'sso-refused');
    await page.goto(`${urls[0]}/playground/`);
    await page.getByRole('link', { name: 'Sign in with idp' }).waitFor();
  });
});
