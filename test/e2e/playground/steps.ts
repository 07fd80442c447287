// What a person does in the Playground, as steps the browser tests share: signing in, opening a
// page, filling in and sending the router, provider, user and key forms, sending a chat message
// and reading its answer, reading the usage list. A step finds controls as a person does, by
// their label or role; it leaves what should follow (a message, a row, a resource) to the test.
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { eventually } from './browser.ts';

/** The texts of the cells of the list row whose header is `name` (the action cell last). */
export async function rowOf(page: Page, name: string): Promise<string[]> {
  return page
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name, exact: true }) })
    .getByRole('cell')
    .allTextContents();
}

/** Signs in with `key` on the sign-in page, and waits for the Chat page it opens on. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.goto('/playground/');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();
}

/** Follows the link `name` in the page navigation, and waits for that page's heading. */
export async function goTo(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
}

/** The page navigation's links each role sees, in order. */
export const PAGES_OF = {
  user: ['Chat', 'Transcribe', 'Usage', 'Account'],
  team_admin: ['Chat', 'Transcribe', 'Usage', 'Account', 'Teams', 'Users'],
  admin: ['Chat', 'Transcribe', 'Usage', 'Account', 'Routers', 'Providers', 'Teams', 'Users', 'Status'],
} as const satisfies Record<string, readonly string[]>;

/** The links of the page navigation, in order: which pages the signed-in key may open. */
export async function navigationLinks(page: Page): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
}

export interface RouterFormInput {
  readonly name: string;
  readonly type: string;
  readonly aliases: string;
  readonly strategy: string;
  readonly promptPrice: string;
  readonly completionPrice: string;
  readonly maxCompletionTokens: string;
}

/** On the Routers page: fills in the New router form and presses "Create router". */
export async function createRouterThroughForm(page: Page, router: RouterFormInput): Promise<void> {
  await page.getByLabel('Name').fill(router.name);
  await page.getByLabel('Type').selectOption(router.type);
  await page.getByLabel('Aliases').fill(router.aliases);
  await page.getByLabel('Load balancing strategy').selectOption(router.strategy);
  await page.getByLabel('Prompt token cost (per 1M tokens)').fill(router.promptPrice);
  await page.getByLabel('Completion token cost (per 1M tokens)').fill(router.completionPrice);
  await page.getByLabel('Max completion tokens (optional)').fill(router.maxCompletionTokens);
  await page.getByRole('button', { name: 'Create router' }).click();
}

/**
 * On the Providers page: picks the router a new provider serves, and checks that the form's
 * price fields then show that router's prices (`shown`, as the gateway serves them).
 */
export async function chooseRouterForProvider(
  page: Page,
  router: string,
  shown: { readonly prompt: string; readonly completion: string },
): Promise<void> {
  await page.getByLabel('Router').selectOption(router);
  await eventually(
    () => page.getByLabel('Prompt token cost').inputValue(),
    (v) => v === shown.prompt,
    'prompt price shown',
  );
  assert.equal(await page.getByLabel('Completion token cost').inputValue(), shown.completion);
}

export interface SimulatorProviderFormInput {
  readonly id: string;
  readonly model: string;
  readonly timeout: string;
  /** The router's new prompt price, saved on the router with the provider. */
  readonly promptPrice: string;
  readonly paramsTotal: string;
  readonly zone: string;
  readonly tokensPerSecond: string;
  readonly completionTokens: string;
}

/**
 * On the Providers page, once the router is chosen (chooseRouterForProvider): fills in the rest
 * of the New provider form for a simulator provider and presses "Create provider".
 */
export async function createSimulatorProviderThroughForm(page: Page, provider: SimulatorProviderFormInput): Promise<void> {
  await page.getByLabel('Type').selectOption('simulator');
  await page.getByLabel('Id (optional)').fill(provider.id);
  await page.getByLabel('Model name').fill(provider.model);
  await page.getByLabel('Timeout (seconds)').fill(provider.timeout);
  await page.getByLabel('Prompt token cost').fill(provider.promptPrice);
  await page.getByLabel('Total parameters (billions)').fill(provider.paramsTotal);
  await page.getByLabel('Electricity zone').selectOption(provider.zone);
  await page.getByLabel('Tokens per second').fill(provider.tokensPerSecond);
  await page.getByLabel('Completion tokens').fill(provider.completionTokens);
  await page.getByRole('button', { name: 'Create provider' }).click();
}

export interface UserFormInput {
  readonly id: string;
  readonly name: string;
  readonly budget: string;
  readonly period: string;
}

/** On the Users page: fills in the New user form and presses "Create user". */
export async function createUserThroughForm(page: Page, user: UserFormInput): Promise<void> {
  await page.getByLabel('Id (optional)').fill(user.id);
  await page.getByLabel('Name').fill(user.name);
  await page.getByLabel('Budget', { exact: true }).fill(user.budget);
  await page.getByLabel('Budget period').selectOption(user.period);
  await page.getByRole('button', { name: 'Create user' }).click();
}

/** On a page with API keys: creates a key named `name`, and reads its secret, shown this once. */
export async function createKeyAndReadSecret(page: Page, name: string): Promise<string> {
  await page.getByLabel('Key name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = page.getByLabel('Secret key');
  await secret.waitFor();
  return secret.inputValue();
}

/** Presses "Done, hide it" under a new key's secret, and checks that the secret is gone. */
export async function hideSecret(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Done, hide it' }).click();
  assert.equal(await page.getByLabel('Secret key').count(), 0, 'the secret is gone once hidden');
}

/** On the Chat page: picks the model, types the message and sends it with Enter. */
export async function sendChatMessage(page: Page, model: string, text: string): Promise<void> {
  await page.getByLabel('Model', { exact: true }).selectOption(model);
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
}

export interface Answer {
  readonly answer: Locator;
  /** The streamed text. */
  readonly text: string;
  /** The usage line under it, "<prompt> prompt + <completion> completion = <total>". */
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  /** The cost as shown. */
  readonly cost: string;
}

/** On the Chat page: waits for the first answer's usage, then reads the answer, its tokens and its cost. */
export async function readFirstAnswer(page: Page): Promise<Answer> {
  const answer = page.locator('.turn.assistant').first();
  const usage = answer.getByRole('definition').filter({ hasText: /prompt \+/ });
  await usage.waitFor();
  const text = (await answer.locator('.text').textContent()) ?? '';
  const [, prompt, completion, total] = /^(\d+) prompt \+ (\d+) completion = (\d+)$/.exec((await usage.textContent()) ?? '') ?? [];
  const cost = (await answer.locator('dd.cost').textContent()) ?? '';
  return { answer, text, tokens: { prompt: Number(prompt), completion: Number(completion), total: Number(total) }, cost };
}

/** In a usage view: presses "Apply filter" and counts the requests listed. */
export async function applyUsageFilter(page: Page): Promise<number> {
  await page.getByRole('button', { name: 'Apply filter' }).click();
  return page.locator('table.records tbody tr').count();
}

/** In a usage view: the model, cost and status of the newest request listed, as shown. */
export async function firstUsageRecord(page: Page): Promise<{ model: string; cost: string; status: string }> {
  const cells = await page.locator('table.records tbody tr').first().getByRole('cell').allTextContents();
  return { model: cells[1] ?? '', cost: cells[3] ?? '', status: cells[6] ?? '' };
}
