// The scenario in a real browser, against a real gateway with the simulator provider:
// an admin creates a router and a provider through the forms (the provider form also sets the
// router's prices, spec 2.2), then a user with a budget and a key; that user signs in, chats
// (the streamed answer appears, then its cost), finds the request in Usage with the same cost,
// and is refused with a readable message once the budget is spent. Each page is screenshotted.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';

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
  gw = await startTestGateway('models: []\n');
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
  user = await browser.open(gw.url);
});

after(async () => {
  await browser?.close();
  await gw?.close();
});

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto('/playground/');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
}

async function goTo(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
}

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
    const nav = admin.page.getByRole('navigation', { name: 'Pages' });
    assert.deepEqual(await nav.getByRole('link').allTextContents(), ['Chat', 'Usage', 'Account', 'Routers', 'Providers', 'Users']);
  });

  test('the admin creates a router with the router form', async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    await page.getByLabel('Name').fill(ROUTER);
    await page.getByLabel('Type').selectOption('text-generation');
    await page.getByLabel('Aliases').fill('team, team-gpt');
    await page.getByLabel('Load balancing strategy').selectOption('round_robin');
    await page.getByLabel('Prompt token cost (per 1M tokens)').fill(PROMPT_PRICE_AT_CREATION);
    await page.getByLabel('Completion token cost (per 1M tokens)').fill(COMPLETION_PRICE);
    await page.getByLabel('Max completion tokens (optional)').fill('20');
    await page.getByRole('button', { name: 'Create router' }).click();
    await page.getByRole('rowheader', { name: ROUTER }).waitFor();
    await page.getByRole('status').filter({ hasText: `Router "${ROUTER}" created.` }).waitFor();
    const router = (await gw.get(`/v1/admin/routers/${ROUTER}`)).body;
    assert.deepEqual(
      { type: router.type, aliases: router.aliases, strategy: router.load_balancing_strategy, costs: router.costs, max: router.max_completion_tokens },
      { type: 'text-generation', aliases: ['team', 'team-gpt'], strategy: 'round_robin', costs: { prompt_tokens: 500, completion_tokens: 1000 }, max: 20 },
    );
    await screenshot(page, 'routers');
  });

  test("the admin creates a simulator provider, and its form shows and changes the router's prices", async () => {
    const { page } = admin;
    await goTo(page, 'Providers');
    await page.getByLabel('Router').selectOption(ROUTER);
    // The price fields read the chosen router's prices.
    await eventually(() => page.getByLabel('Prompt token cost').inputValue(), (v) => v === PROMPT_PRICE_AT_CREATION, 'prompt price shown');
    assert.equal(await page.getByLabel('Completion token cost').inputValue(), COMPLETION_PRICE);
    await page.getByLabel('Type').selectOption('simulator');
    await page.getByLabel('Id (optional)').fill('team-sim');
    await page.getByLabel('Model name').fill('simulated-llama-8b');
    await page.getByLabel('Timeout (seconds)').fill('30');
    await page.getByLabel('Prompt token cost').fill(PROMPT_PRICE);
    await page.getByLabel('Total parameters (billions)').fill('8');
    await page.getByLabel('Electricity zone').selectOption('FRA');
    // Slow enough that the answer visibly streams in.
    await page.getByLabel('Tokens per second').fill('25');
    await page.getByLabel('Completion tokens').fill('20');
    await page.getByRole('button', { name: 'Create provider' }).click();
    await page.getByRole('rowheader', { name: 'team-sim' }).waitFor();
    const provider = (await gw.get('/v1/admin/providers/team-sim')).body;
    assert.deepEqual(
      { router: provider.router, type: provider.type, model: provider.model_name, timeout: provider.timeout, carbon: provider.carbon, simulator: provider.simulator, has_key: provider.has_key },
      { router: ROUTER, type: 'simulator', model: 'simulated-llama-8b', timeout: 30, carbon: { params_total_b: 8, zone: 'FRA', pue: 1.2 }, simulator: { latency_ms: 0, tokens_per_second: 25, completion_tokens: 20 }, has_key: false },
    );
    const router = (await gw.get(`/v1/admin/routers/${ROUTER}`)).body;
    assert.deepEqual(router.costs, { prompt_tokens: 1000, completion_tokens: 1000 }, 'the provider form saved the new prompt price on the router');
    assert.deepEqual(router.providers, ['team-sim']);
    await screenshot(page, 'providers');
  });

  test('the admin creates a user with a budget and issues them a key, shown once', async () => {
    const { page } = admin;
    await goTo(page, 'Users');
    await page.getByLabel('Id (optional)').fill('ann');
    await page.getByLabel('Name').fill('Ann');
    await page.getByLabel('Budget', { exact: true }).fill(BUDGET);
    await page.getByLabel('Budget period').selectOption('monthly');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('rowheader', { name: 'Ann' }).waitFor();
    await screenshot(page, 'users');
    await page.getByRole('link', { name: 'Ann' }).first().click();
    await page.getByRole('heading', { name: 'Ann', level: 1 }).waitFor();
    await page.getByLabel('Key name').fill('playground');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByLabel('Secret key');
    await secret.waitFor();
    userKey = await secret.inputValue();
    assert.match(userKey, /^tg-/);
    const stored = (await gw.get('/v1/admin/users/ann')).body;
    assert.deepEqual({ budget: stored.budget, period: stored.budget_period, role: stored.role }, { budget: 0.05, period: 'monthly', role: 'user' });
    await screenshot(page, 'user');
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    assert.equal(await page.getByLabel('Secret key').count(), 0, 'the secret is gone once hidden');
  });
});

describe('the user chats within their budget', () => {
  test('the user signs in and sees no admin page', async () => {
    await signIn(user.page, userKey);
    const nav = user.page.getByRole('navigation', { name: 'Pages' });
    assert.deepEqual(await nav.getByRole('link').allTextContents(), ['Chat', 'Usage', 'Account']);
  });

  test('the answer streams in, then its usage appears under it: tokens, cost, kWh and kgCO2eq', async () => {
    const { page } = user;
    await page.getByLabel('Model').selectOption(ROUTER);
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
    await page.getByLabel('Message', { exact: true }).fill('Hello, who are you?');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const answer = page.locator('.turn.assistant').first();
    const usage = answer.getByRole('definition').filter({ hasText: /prompt \+/ });
    await usage.waitFor();
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    assert.deepEqual(seen, ['text', 'usage'], 'the text arrives before the usage block');
    const text = (await answer.locator('.text').textContent()) ?? '';
    assert.equal(text.trim().split(/\s+/).length, 20, 'the simulator streamed 20 tokens, one word each');
    const tokens = (await usage.textContent()) ?? '';
    const [, prompt, completion, total] = /^(\d+) prompt \+ (\d+) completion = (\d+)$/.exec(tokens) ?? [];
    assert.equal(Number(completion), 20);
    assert.equal(Number(prompt) + 20, Number(total));
    chatCost = (await answer.locator('dd.cost').textContent()) ?? '';
    assert.equal(chatCost, String(Number(total) / 1000), 'cost = tokens × 0.001 (1000 per million for both)');
    const energy = (await answer.getByRole('definition').filter({ hasText: /kWh$/ }).textContent()) ?? '';
    const emissions = (await answer.getByRole('definition').filter({ hasText: /kgCO2eq$/ }).textContent()) ?? '';
    assert.match(energy, /^\d\.\d+e-\d+ kWh$/, 'an 8B model in FRA uses a little energy');
    assert.match(emissions, /^\d\.\d+e-\d+ kgCO2eq$/);
    await page.getByRole('status').filter({ hasText: `cost ${chatCost}` }).waitFor();
    await screenshot(page, 'chat');
  });

  test('Usage lists the request with the same cost, with totals and the spend chart', async () => {
    const { page } = user;
    await goTo(page, 'Usage');
    // The record is written just after the answer is sent: reload the page until it is there.
    await eventually(
      async () => {
        await page.getByRole('button', { name: 'Apply filter' }).click();
        return page.locator('table.records tbody tr').count();
      },
      (rows) => rows === 1,
      'usage rows',
    );
    const cells = await page.locator('table.records tbody tr').first().getByRole('cell').allTextContents();
    assert.equal(cells[1], ROUTER);
    assert.equal(cells[3], chatCost);
    assert.equal(cells[6], '200');
    assert.equal(await page.getByRole('definition').filter({ hasText: chatCost }).count() >= 1, true, 'the totals show the same cost');
    const chart = page.getByRole('img', { name: /^Spend per day from/ });
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
    assert.match(text, /^Your budget is spent: Insufficient budget: 0\.0\d+ remaining, and this request may cost up to 0\.0\d+ \(set a lower max_tokens to reserve less\)\. Ask an admin to raise it, or wait for the next period\.$/);
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
