// The scenario in a real browser, against a real gateway with the simulator provider:
// an admin creates a router and a provider through the forms (the provider form also sets the
// router's prices, spec 2.2), then a user with a budget and a key; that user signs in, chats
// (the streamed answer appears, then its cost), finds the request in Usage with the same cost,
// and is refused with a readable message once the budget is spent. Each page is screenshotted.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
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

const bed = testBed();

// page.evaluate's callbacks run in the browser; the root tsconfig (Node) has no DOM types.
declare const document: any;
declare const window: any;
declare const MutationObserver: any;

const ROUTER = 'team-chat';
/**
 * Prices make each token cost 0.001 and the router bounds answers to 20 tokens, so one message
 * holds about 0.03 of the budget: a budget of 0.05 covers the first message, not the second.
 */
const PROMPT_PRICE_AT_CREATION = '500';
const PROMPT_PRICE = '1000';
const COMPLETION_PRICE = '1000';
const BUDGET = '0.05';

let gw: TestGateway;
let browser: PlaygroundBrowser;
let admin: OpenPage;
let user: OpenPage;
let userKey = '';
let chatCost = '';

before(async () => {
  gw = await bed.gateway({ models: [] });
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
  user = await browser.open(gw.url);
});

after(async () => {
  await browser?.close();
});

describe('an admin sets up a model and a user through the Playground', () => {
  test('the sign-in page refuses an unknown key with a readable message', async () => {
    const { page } = admin;
    await page.goto('/playground/');
    await screenshot(page, 'sign-in');
    await page.getByLabel('API key').fill('tg-not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const message = page.getByRole('alert');
    await message.waitFor();
    assert.equal(await message.textContent(), 'Your API key was not accepted: Invalid API key.');
  });

  test('the admin signs in and sees the admin pages', async () => {
    await signIn(admin.page, gw.adminKey);
    assert.deepEqual(await navigationLinks(admin.page), PAGES_OF.admin);
  });

  test('the admin creates a router with the router form', async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    await createRouterThroughForm(page, {
      name: ROUTER,
      type: 'text-generation',
      aliases: 'team, team-gpt',
      strategy: 'round_robin',
      promptPrice: PROMPT_PRICE_AT_CREATION,
      completionPrice: COMPLETION_PRICE,
      maxCompletionTokens: '20',
    });
    await page.getByRole('rowheader', { name: ROUTER }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: `Router "${ROUTER}" created.` })
      .waitFor();
    const router = (await gw.get(`/v1/admin/routers/${ROUTER}`)).body;
    assert.deepEqual(
      {
        type: router.type,
        aliases: router.aliases,
        strategy: router.load_balancing_strategy,
        costs: router.costs,
        max: router.max_completion_tokens,
      },
      {
        type: 'text-generation',
        aliases: ['team', 'team-gpt'],
        strategy: 'round_robin',
        costs: { prompt_tokens: 500, completion_tokens: 1000, audio_minutes: 0 },
        max: 20,
      },
    );
    await screenshot(page, 'routers');
  });

  test("the admin creates a simulator provider, and its form shows and changes the router's prices", async () => {
    const { page } = admin;
    await goTo(page, 'Providers');
    // The price fields read the chosen router's prices.
    await chooseRouterForProvider(page, ROUTER, { prompt: PROMPT_PRICE_AT_CREATION, completion: COMPLETION_PRICE });
    await createSimulatorProviderThroughForm(page, {
      id: 'team-sim',
      model: 'simulated-llama-8b',
      timeout: '30',
      promptPrice: PROMPT_PRICE,
      paramsTotal: '8',
      zone: 'FRA',
      // Slow enough that the answer visibly streams in.
      tokensPerSecond: '25',
      completionTokens: '20',
    });
    await page.getByRole('rowheader', { name: 'team-sim' }).waitFor();
    const provider = (await gw.get('/v1/admin/providers/team-sim')).body;
    assert.deepEqual(
      {
        router: provider.router,
        type: provider.type,
        model: provider.model_name,
        timeout: provider.timeout,
        carbon: provider.carbon,
        simulator: provider.simulator,
        has_key: provider.has_key,
      },
      {
        router: ROUTER,
        type: 'simulator',
        model: 'simulated-llama-8b',
        timeout: 30,
        carbon: { params_total_b: 8, zone: 'FRA', pue: 1.2 },
        simulator: { latency_ms: 0, tokens_per_second: 25, completion_tokens: 20 },
        has_key: false,
      },
    );
    const router = (await gw.get(`/v1/admin/routers/${ROUTER}`)).body;
    assert.deepEqual(
      router.costs,
      { prompt_tokens: 1000, completion_tokens: 1000, audio_minutes: 0 },
      'the provider form saved the new prompt price on the router',
    );
    assert.deepEqual(router.providers, ['team-sim']);
    await screenshot(page, 'providers');
  });

  test('the admin creates a user with a budget and issues them a key, shown once', async () => {
    const { page } = admin;
    await goTo(page, 'Users');
    await createUserThroughForm(page, { id: 'ann', name: 'Ann', budget: BUDGET, period: 'monthly' });
    await page.getByRole('rowheader', { name: 'Ann' }).waitFor();
    await screenshot(page, 'users');
    await page.getByRole('link', { name: 'Ann' }).first().click();
    await page.getByRole('heading', { name: 'Ann', level: 1 }).waitFor();
    userKey = await createKeyAndReadSecret(page, 'playground');
    assert.match(userKey, /^tg-/);
    const stored = (await gw.get('/v1/admin/users/ann')).body;
    assert.deepEqual(
      { budget: stored.budget, period: stored.budget_period, role: stored.role },
      { budget: 0.05, period: 'monthly', role: 'user' },
    );
    await screenshot(page, 'user');
    await hideSecret(page);
  });
});

describe('the user chats within their budget', () => {
  test('the user signs in and sees no admin page', async () => {
    await signIn(user.page, userKey);
    assert.deepEqual(await navigationLinks(user.page), ['Chat', 'Transcribe', 'Usage', 'Account']);
  });

  test('the answer streams in, then its usage appears under it: tokens, cost, kWh and kgCO2eq', async () => {
    const { page } = user;
    // Record the order in which the answer's text and its usage appear (an order, not a time).
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => {
        const answer = document.querySelector('.turn.assistant');
        if (answer?.querySelector('.text') && !seen.includes('text')) seen.push('text');
        if (answer?.querySelector('.usage') && !seen.includes('usage')) seen.push('usage');
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await sendChatMessage(page, ROUTER, 'Hello, who are you?');
    const { answer, text, tokens, cost } = await readFirstAnswer(page);
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    assert.deepEqual(seen, ['text', 'usage'], 'the text arrives before the usage block');
    assert.equal(text.trim().split(/\s+/).length, 20, 'the simulator streamed 20 tokens, one word each');
    assert.equal(tokens.completion, 20);
    assert.equal(tokens.prompt + 20, tokens.total);
    chatCost = cost;
    assert.equal(chatCost, String(tokens.total / 1000), 'cost = tokens × 0.001 (1000 per million for both)');
    const energy = (await answer.getByRole('definition').filter({ hasText: /kWh$/ }).textContent()) ?? '';
    const emissions =
      (await answer
        .getByRole('definition')
        .filter({ hasText: /kgCO2eq$/ })
        .textContent()) ?? '';
    assert.match(energy, /^\d\.\d+e-\d+ kWh$/, 'an 8B model in FRA uses a little energy');
    assert.match(emissions, /^\d\.\d+e-\d+ kgCO2eq$/);
    await page
      .getByRole('status')
      .filter({ hasText: `cost ${chatCost}` })
      .waitFor();
    await screenshot(page, 'chat');
  });

  test('Usage lists the request with the same cost, with totals and the spend chart', async () => {
    const { page } = user;
    await goTo(page, 'Usage');
    // The record is written just after the answer is sent: reload the page until it is there.
    await eventually(
      () => applyUsageFilter(page),
      (rows) => rows === 1,
      'usage rows',
    );
    assert.deepEqual(await firstUsageRecord(page), { model: ROUTER, cost: chatCost, status: '200' });
    assert.equal((await page.getByRole('definition').filter({ hasText: chatCost }).count()) >= 1, true, 'the totals show the same cost');
    // The first chart: the caller's own spend (the spend report's follows it).
    const chart = page.getByRole('img', { name: /^Spend per day from/ }).first();
    assert.match((await chart.getAttribute('aria-label')) ?? '', new RegExp(`${chatCost.replace('.', '\\.')} in total`));
    await page.getByLabel('Model').selectOption(ROUTER);
    await page.getByRole('button', { name: 'Apply filter' }).click();
    await page.getByRole('status').filter({ hasText: 'Usage filtered.' }).waitFor();
    assert.equal(await page.locator('table.records tbody tr').count(), 1);
    await screenshot(page, 'usage');
  });

  test('Account shows the budget, what is spent and what remains this month', async () => {
    const { page } = user;
    await goTo(page, 'Account');
    const budget = page.getByRole('region', { name: 'Budget' });
    await budget.getByText(chatCost, { exact: true }).waitFor();
    const values = await budget.getByRole('definition').allTextContents();
    assert.equal(values[0], BUDGET);
    assert.equal(values[1], chatCost);
    assert.equal(values[3], String(Math.round((Number(BUDGET) - Number(chatCost)) * 1e6) / 1e6));
    assert.match(values[4] ?? '', /^monthly, \d{4}-\d{2}-01 to \d{4}-\d{2}-01/);
    await page.getByRole('cell', { name: /this session/ }).waitFor();
    await screenshot(page, 'account');
  });

  test('once the budget is spent, the next message is refused with a readable sentence, not JSON', async () => {
    const { page } = user;
    await goTo(page, 'Chat');
    await page.getByLabel('Model').selectOption(ROUTER);
    await page.getByLabel('Message', { exact: true }).fill('And what do you cost?');
    await page.getByRole('button', { name: 'Send' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    const text = (await refusal.textContent()) ?? '';
    assert.match(
      text,
      /^Your budget is spent: Insufficient budget: 0\.0\d+ remaining, and this request may cost up to 0\.0\d+ \(set a lower max_tokens to reserve less\)\. Ask an admin to raise it, or wait for the next period\.$/,
    );
    assert.doesNotMatch(text, /[{}]|insufficient_quota/);
    await screenshot(page, 'error-budget');
  });

  test('signing out forgets the key, which never appeared in a URL', async () => {
    const { page } = user;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    for (const url of [...user.requestedUrls, ...admin.requestedUrls]) {
      assert.ok(!url.includes(userKey) && !url.includes(gw.adminKey), `a key appeared in ${url}`);
    }
    assert.deepEqual(user.problems, [], 'no console errors (a CSP violation would be one)');
    assert.deepEqual(admin.problems, [], 'no console errors');
  });
});
