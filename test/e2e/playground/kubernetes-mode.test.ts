// The Playground against a gateway in Kubernetes mode, in a real browser: the same pages work,
// and what an admin writes through them becomes custom resources. The whole system runs as in a
// cluster (test/e2e/support/system.ts): kube-apiserver with crds/ and the chart's RBAC, Redis, one
// operator and one gateway, each on its chart service account.
//
// The admin creates a router, a simulator provider (whose form also changes the router's prompt
// price) and a user with a budget through the forms. Each write answers as soon as its resource
// is written, and kubectl shows a ModelRouter, a ModelProvider and a GatewayUser with the typed
// values, written by the gateway's field manager. The admin API reads what is served, which the
// operator publishes a moment after the write; the pages read again until the change is there
// (gateway/playground/web/read-after-write.ts), so the test waits for it on the same page,
// never reloading it, and the "Created …" link leads straight to the new user's page. The page
// reads again for a few seconds only, so the test paces its reads by the publication
// (paced-reads.ts): what it waits on is the gateway serving the change, not a quiet machine.
// The user, with a key issued on their page, chats with the router, sees the streamed answer and
// its cost, finds the same cost in Usage and in the GatewayUser's status. An edit on the Routers
// page changes the ModelRouter, and the gateway then serves the new alias and price.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { SETTLE_MS } from '../../support/patience.ts';
import { until } from '../support/poll.ts';
import { NAMESPACE, startSystem, type System } from '../support/system.ts';
import { launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { paceReadsByPublication, type PacedReads } from './paced-reads.ts';
import {
  applyUsageFilter,
  chooseRouterForProvider,
  createKeyAndReadSecret,
  createRouterThroughForm,
  createSimulatorProviderThroughForm,
  createUserThroughForm,
  firstUsageRecord,
  goTo,
  hideSecret,
  navigationLinks,
  PAGES_OF,
  readFirstAnswer,
  sendChatMessage,
  signIn,
} from './steps.ts';

const ROUTER = 'team-chat';
const PROVIDER = 'team-sim';
/** A ModelProvider is served under `<namespace>-<name>` (docs/kubernetes.md). */
const PROVIDER_ID = `${NAMESPACE}-${PROVIDER}`;
const USER = 'ann';
/** Prices make each token cost 0.001 (1000 per million), so a 20-token answer costs about 0.03. */
const PROMPT_PRICE_AT_CREATION = '500';
const PROMPT_PRICE = '1000';
const COMPLETION_PRICE = '1000';
const NEW_COMPLETION_PRICE = '2000';
const BUDGET = '0.05';

let system: System;
let browser: PlaygroundBrowser;
let admin: OpenPage;
let user: OpenPage;
let userKey = '';
let chatCost = '';

before(async () => {
  system = await startSystem({ operators: 1, gateways: 1 });
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(system.gateways[0]!.url);
  user = await browser.open(system.gateways[0]!.url);
});

after(async () => {
  await browser?.close();
  await system?.stop();
});

interface Resource {
  metadata: { name: string; managedFields?: { manager: string }[] };
  spec: any;
  status?: any;
}

/**
 * Waits, without reloading, until the page that made a write shows it: proof that the page reads
 * again until the operator has published the change. Marks the page's global object first, so
 * that a reload (which would also show the change) fails the check. Waits first for the gateway
 * to serve the change (`paced`, set up before the write); the page then needs one more read,
 * within the browser's patience (WAIT_MS).
 */
async function shownWithoutReload(page: Page, shown: Locator, paced: PacedReads): Promise<void> {
  await page.evaluate(() => {
    (globalThis as { notReloaded?: boolean }).notReloaded = true;
  });
  try {
    await paced.published;
    await shown.first().waitFor();
  } finally {
    await paced.stop();
  }
  assert.equal(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded), true, 'the page was not reloaded');
}

/** GET `path` from the gateway as its bootstrap admin (or with `key`): what it serves now. */
async function served<T>(path: string, key = system.adminKey): Promise<T> {
  const response = await fetch(system.gateways[0]!.url + path, { headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
  return (await response.json()) as T;
}

interface ServedRouter {
  name: string;
  aliases: string[];
  costs: { prompt_tokens: number; completion_tokens: number };
}

/** The router as the gateway serves it, once it does. */
async function servedRouter(): Promise<ServedRouter | undefined> {
  return (await served<{ data: ServedRouter[] }>('/v1/admin/routers')).data.find((r) => r.name === ROUTER);
}

/** Paces `page`'s reads of `path` by the gateway serving what `check` looks for (see paced-reads.ts). */
function pace(page: Page, path: string, check: () => Promise<boolean>, what: string): Promise<PacedReads> {
  return paceReadsByPublication(page, path, check, what, system.operators);
}

/** `kubectl -n tollgate get <kind> <name> -o json`, as the cluster's admin. */
async function kubectlGet(kind: string, name: string): Promise<Resource> {
  return JSON.parse(await system.kubectl(['-n', NAMESPACE, 'get', kind, name, '-o', 'json', '--show-managed-fields']));
}

/** The admin API writes with server-side apply as `tollgate-gateway` (kubectl would be `kubectl-client-side-apply`). */
function writtenByGateway(resource: Resource): boolean {
  return (resource.metadata.managedFields ?? []).some((entry) => entry.manager === 'tollgate-gateway');
}

/**
 * For a page that did not make the write itself (it reads once, when opened): waits until the
 * gateway serves the change (`served`, failing with the operators' output if it never does),
 * then loads `hash` afresh and waits for `shown` on it.
 */
async function openOnceServed(page: Page, hash: string, served: () => Promise<boolean>, shown: Locator, what: string): Promise<void> {
  await until(async () => (await served()) || undefined, what, system.operators);
  await page.goto(`/playground/${hash}`);
  await page.reload();
  await shown.first().waitFor({ state: 'attached' });
}

describe('in Kubernetes mode, an admin sets up a model and a user through the Playground', () => {
  test('the admin signs in with the admin key and sees the admin pages', async () => {
    await signIn(admin.page, system.adminKey);
    assert.deepEqual(await navigationLinks(admin.page), PAGES_OF.admin);
  });

  test('the router form writes a ModelRouter, and the page lists the router once the operator has published it, without a reload', async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    const paced = await pace(
      page,
      '/v1/admin/routers',
      async () => (await servedRouter()) !== undefined,
      'the gateway serves the new router',
    );
    await createRouterThroughForm(page, {
      name: ROUTER,
      type: 'text-generation',
      aliases: 'team, team-gpt',
      strategy: 'round_robin',
      promptPrice: PROMPT_PRICE_AT_CREATION,
      completionPrice: COMPLETION_PRICE,
      maxCompletionTokens: '20',
    });
    await page
      .getByRole('status')
      .filter({ hasText: `Router "${ROUTER}" created.` })
      .waitFor();

    // Written as a resource by the time the form says so: no waiting on the operator here.
    const router = await kubectlGet('modelrouter', ROUTER);
    assert.ok(writtenByGateway(router), 'the ModelRouter was written by the gateway (field manager tollgate-gateway)');
    assert.deepEqual(
      {
        type: router.spec.type,
        aliases: router.spec.aliases,
        strategy: router.spec.loadBalancingStrategy,
        costs: router.spec.costs,
        max: router.spec.maxCompletionTokens,
      },
      {
        type: 'text-generation',
        aliases: ['team', 'team-gpt'],
        strategy: 'round_robin',
        costs: { promptTokens: PROMPT_PRICE_AT_CREATION, completionTokens: COMPLETION_PRICE },
        max: 20,
      },
    );

    await shownWithoutReload(page, page.getByRole('rowheader', { name: ROUTER }), paced);
    const cells = await page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: ROUTER }) })
      .getByRole('cell')
      .allTextContents();
    // Type, aliases, strategy, routing mode (the gateways' default), waiting requests (none: local mode), fallbacks (none), prices.
    assert.deepEqual(cells.slice(0, 8), [
      'text-generation',
      'team, team-gpt',
      'round_robin',
      'local',
      '–',
      '–',
      PROMPT_PRICE_AT_CREATION,
      COMPLETION_PRICE,
    ]);
    await screenshot(page, 'routers', 'kubernetes');
  });

  test('the provider form writes a ModelProvider on that router, and its prices on the ModelRouter', async () => {
    const { page } = admin;
    await goTo(page, 'Providers');
    // The price fields read the router's prices as the gateway serves them.
    await chooseRouterForProvider(page, ROUTER, { prompt: PROMPT_PRICE_AT_CREATION, completion: COMPLETION_PRICE });
    const paced = await pace(
      page,
      '/v1/admin/providers',
      async () => (await served<{ data: { id: string }[] }>('/v1/admin/providers')).data.some((p) => p.id === PROVIDER_ID),
      'the gateway serves the new provider',
    );
    await createSimulatorProviderThroughForm(page, {
      id: PROVIDER,
      model: 'simulated-llama-8b',
      timeout: '30',
      promptPrice: PROMPT_PRICE,
      paramsTotal: '8',
      zone: 'FRA',
      // Slow enough that the answer visibly streams in.
      tokensPerSecond: '25',
      completionTokens: '20',
    });
    await page
      .getByRole('status')
      .filter({ hasText: `Provider "${PROVIDER_ID}" created; prices of router "${ROUTER}" updated.` })
      .waitFor();

    const provider = await kubectlGet('modelprovider', PROVIDER);
    assert.ok(writtenByGateway(provider), 'the ModelProvider was written by the gateway');
    assert.deepEqual(provider.spec, {
      routerRef: { name: ROUTER },
      type: 'simulator',
      model: 'simulated-llama-8b',
      timeoutSeconds: 30,
      carbon: { paramsTotalB: 8, zone: 'FRA', pue: 1.2 },
      simulator: { latencyMs: 0, tokensPerSecond: 25, completionTokens: 20 },
    });
    assert.deepEqual(
      (await kubectlGet('modelrouter', ROUTER)).spec.costs,
      { promptTokens: PROMPT_PRICE, completionTokens: COMPLETION_PRICE },
      'the new prompt price is on the ModelRouter',
    );

    await shownWithoutReload(page, page.getByRole('rowheader', { name: PROVIDER_ID }), paced);
    await screenshot(page, 'providers', 'kubernetes');
  });

  test('the user form writes a GatewayUser; its "Created" link opens the user once the operator has made them, and the admin issues them a key, shown once', async () => {
    const { page } = admin;
    await goTo(page, 'Users');
    const paced = await pace(
      page,
      `/v1/admin/users/${USER}`,
      async () => (await served(`/v1/admin/users/${USER}`)) !== undefined,
      'the gateway serves the new user',
    );
    await createUserThroughForm(page, { id: USER, name: 'Ann', budget: BUDGET, period: 'monthly' });
    await page
      .getByRole('status')
      .filter({ hasText: `User "Ann" created with id ${USER}.` })
      .waitFor();
    // Followed at once, before the operator has put the user into Redis (which the user's page
    // reads): the page reads again on 404 until the user is there.
    await page
      .getByText(/^Created /)
      .getByRole('link', { name: 'Ann' })
      .click();

    const gatewayUser = await kubectlGet('gatewayuser', USER);
    assert.ok(writtenByGateway(gatewayUser), 'the GatewayUser was written by the gateway');
    assert.deepEqual(gatewayUser.spec, { displayName: 'Ann', role: 'user', budget: BUDGET, budgetPeriod: 'monthly' });

    await shownWithoutReload(page, page.getByRole('heading', { name: 'Ann', level: 1 }), paced);
    userKey = await createKeyAndReadSecret(page, 'playground');
    assert.match(userKey, /^tg-/);
    await screenshot(page, 'user', 'kubernetes');
    await hideSecret(page);
  });
});

describe('in Kubernetes mode, the user chats with the router the operator published', () => {
  test('the user signs in and sees no admin page', async () => {
    await signIn(user.page, userKey);
    assert.deepEqual(await navigationLinks(user.page), ['Chat', 'Transcribe', 'Usage', 'Account']);
  });

  test('the answer streams in, then its cost appears under it', async () => {
    const { page } = user;
    await sendChatMessage(page, ROUTER, 'Hello, who are you?');
    const { text, tokens, cost } = await readFirstAnswer(page);
    assert.equal(text.trim().split(/\s+/).length, 20, 'the simulator of the ModelProvider streamed 20 tokens, one word each');
    assert.equal(tokens.completion, 20);
    chatCost = cost;
    assert.equal(chatCost, String(tokens.total / 1000), "cost = tokens × 0.001: the ModelRouter's prices, as the provider form set them");
    await page
      .getByRole('status')
      .filter({ hasText: `cost ${chatCost}` })
      .waitFor();
    await screenshot(page, 'chat', 'kubernetes');
  });

  test('Usage lists the request with the same cost, and so does the GatewayUser status', async () => {
    const { page } = user;
    await goTo(page, 'Usage');
    // The record is written just after the answer is sent: apply the filter until it is there.
    await until(async () => (await applyUsageFilter(page)) === 1, 'the request in Usage', system.operators, SETTLE_MS);
    assert.deepEqual(await firstUsageRecord(page), { model: ROUTER, cost: chatCost, status: '200' });
    await screenshot(page, 'usage', 'kubernetes');

    const status = await until(
      async () => {
        const found = (await kubectlGet('gatewayuser', USER)).status;
        return found?.requests === 1 ? found : undefined;
      },
      "the request in the GatewayUser's status",
      system.operators,
    );
    assert.equal(Number(status.spent), Number(chatCost));
    assert.equal(Number(status.remaining), Math.round((Number(BUDGET) - Number(chatCost)) * 1e6) / 1e6);
  });
});

describe('in Kubernetes mode, an admin edit on the Routers page changes the ModelRouter', () => {
  test('a new completion price and alias go to the ModelRouter, then to the Routers page and the Chat page', async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    const edited = async () => {
      const router = await servedRouter();
      return router?.aliases.includes('team-next') === true && router.costs.completion_tokens === Number(NEW_COMPLETION_PRICE);
    };
    const paced = await pace(page, '/v1/admin/routers', edited, 'the gateway serves the edited router');
    await page.getByRole('button', { name: `Edit ${ROUTER}` }).click();
    await page.getByRole('heading', { name: `Edit router ${ROUTER}`, level: 2 }).waitFor();
    await page.getByLabel('Aliases').fill('team, team-gpt, team-next');
    await page.getByLabel('Completion token cost (per 1M tokens)').fill(NEW_COMPLETION_PRICE);
    await page.getByRole('button', { name: 'Save router' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Router "${ROUTER}" saved.` })
      .waitFor();

    const router = await kubectlGet('modelrouter', ROUTER);
    assert.deepEqual(
      { aliases: router.spec.aliases, costs: router.spec.costs },
      { aliases: ['team', 'team-gpt', 'team-next'], costs: { promptTokens: PROMPT_PRICE, completionTokens: NEW_COMPLETION_PRICE } },
    );

    await shownWithoutReload(
      page,
      page
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: ROUTER }) })
        .filter({ has: page.getByRole('cell', { name: NEW_COMPLETION_PRICE, exact: true }) }),
      paced,
    );
    const cells = await page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: ROUTER }) })
      .getByRole('cell')
      .allTextContents();
    assert.deepEqual(cells.slice(1, 8), [
      'team, team-gpt, team-next',
      'round_robin',
      'local',
      '–',
      '–',
      PROMPT_PRICE,
      NEW_COMPLETION_PRICE,
    ]);
    await screenshot(page, 'routers-edited', 'kubernetes');

    // The user's Chat page offers the new alias once the gateway serves it.
    await openOnceServed(
      user.page,
      '#/chat',
      async () =>
        (await served<{ data: { aliases: string[] }[] }>('/v1/models', userKey)).data.some((m) => m.aliases.includes('team-next')),
      user.page.getByLabel('Model').locator('option[value="team-next"]'),
      'the gateway serves the new alias to the user',
    );
  });

  test('no key appeared in a URL, and no page logged an error', async () => {
    for (const url of [...user.requestedUrls, ...admin.requestedUrls]) {
      assert.ok(!url.includes(userKey) && !url.includes(system.adminKey), `a key appeared in ${url}`);
    }
    assert.deepEqual(user.problems, [], 'no console errors (a CSP violation would be one)');
    assert.deepEqual(admin.problems, [], 'no console errors');
  });
});
