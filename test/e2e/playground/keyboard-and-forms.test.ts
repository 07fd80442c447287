// How the Playground behaves for keyboard users and in its forms: signing in and creating a
// router with Tab and Enter alone, labels on every control, problems found before sending (with
// focus moved to the first), the server's field errors next to their field, a write-only
// provider key, non-admins kept to their pages, 429 and 404 as sentences, and a revoked key
// signing its user out.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { applyUsageFilter, sendChatMessage, signIn } from './steps.ts';

const bed = testBed();

// page.evaluate's callbacks run in the browser; the root tsconfig (Node) has no DOM types.
declare const document: any;

let gw: TestGateway;
let browser: PlaygroundBrowser;
let admin: OpenPage;
let userKey = '';

const simulator = (router: string) => ({ router, type: 'simulator', model_name: 'sim', simulator: { completion_tokens: 5 } });

before(async () => {
  gw = await bed.gateway({ models: [] });
  const setUp = [
    await gw.post('/v1/admin/routers', { name: 'kb-chat', type: 'text-generation', aliases: ['kb-alias'] }),
    await gw.post('/v1/admin/providers', simulator('kb-chat')),
    await gw.post('/v1/admin/routers', { name: 'kb-limited', type: 'text-generation', rate_limits: { requests_per_minute: 1 } }),
    await gw.post('/v1/admin/providers', simulator('kb-limited')),
    await gw.post('/v1/admin/routers', { name: 'kb-gone', type: 'text-generation' }),
    await gw.post('/v1/admin/providers', simulator('kb-gone')),
    await gw.post('/v1/admin/users', { id: 'bo', name: 'Bo', budget: 1 }),
  ];
  for (const answer of setUp) assert.equal(answer.status, 201, JSON.stringify(answer.body));
  userKey = (await gw.post('/v1/admin/users/bo/keys', { name: 'bo laptop' })).body.key;
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
});

after(async () => {
  await browser?.close();
});

/** Loads a page of the Playground afresh (a hash change alone would keep the forms' state). */
async function visit(page: Page, hash: string): Promise<void> {
  await page.goto(`/playground/${hash}`);
  await page.reload();
  await page.locator('h1').first().waitFor();
}

const focused = (page: Page) =>
  page.evaluate(() => ({
    id: document.activeElement?.id ?? '',
    text: document.activeElement?.textContent?.trim() ?? '',
    tag: document.activeElement?.tagName ?? '',
  }));

/** Waits for focus to land on the element with this text (focus moves after a render). */
async function focusOn(page: Page, text: string): Promise<void> {
  await eventually(
    async () => (await focused(page)).text,
    (t) => t === text,
    `focus on "${text}"`,
  );
}

/** The problem shown for a field, found the way assistive technology finds it: aria-describedby. */
async function problemOf(page: Page, fieldId: string): Promise<string> {
  return page.evaluate((id) => {
    const field = document.getElementById(id);
    if (field?.getAttribute('aria-invalid') !== 'true') return '(not marked invalid)';
    const ids = field.getAttribute('aria-describedby')?.split(' ') ?? [];
    return (
      ids
        .map((d: string) => document.getElementById(d))
        .find((e: { classList: { contains(c: string): boolean } } | null) => e?.classList.contains('problem'))?.textContent ??
      '(no problem described)'
    );
  }, fieldId);
}

describe('with the keyboard alone', () => {
  test('an admin signs in, skips to the content, opens Routers and creates a router with Tab and Enter', async () => {
    const { page } = admin;
    await page.goto('/playground/');
    await page.getByLabel('API key').waitFor();
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).id, 'sign-in-key', 'the key field comes first');
    await page.keyboard.type(gw.adminKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Chat', level: 1 }).waitFor();

    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).text, 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal((await focused(page)).id, 'main');

    // Backwards from the content: the header's controls, then the navigation's links.
    const backwards: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Shift+Tab');
      backwards.push((await focused(page)).text);
    }
    assert.deepEqual(backwards, ['Sign out', 'Status', 'Users', 'Teams', 'Providers', 'Routers']);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Routers', level: 1 }).waitFor();
    await focusOn(page, 'Routers'); // the new page's heading

    // Through the table's buttons to the form: its fields come in reading order.
    for (let i = 0; i < 40 && (await focused(page)).id !== 'router-name'; i++) await page.keyboard.press('Tab');
    const formOrder = ['router-name'];
    await page.keyboard.type('kb-typed');
    const typing: Record<string, string> = { 'router-aliases': 'typed-alias', 'router-prompt': '0.5', 'router-completion': '1.5' };
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      const { id, text } = await focused(page);
      formOrder.push(id || text);
      const value = typing[id];
      if (value) await page.keyboard.type(value);
    }
    assert.deepEqual(formOrder, [
      'router-name',
      'router-type',
      'router-strategy',
      'router-mode',
      'router-aliases',
      'router-fallbacks',
      'router-contextFallback',
      'router-prompt',
      'router-completion',
      'router-audio',
      'router-cached',
      'router-cacheWrite',
      'router-maxContext',
      'router-maxCompletion',
      'Create router',
    ]);
    await page.keyboard.press('Enter');
    await page.getByRole('rowheader', { name: 'kb-typed' }).waitFor();
    const router = (await gw.get('/v1/admin/routers/kb-typed')).body;
    assert.deepEqual(
      { aliases: router.aliases, costs: router.costs },
      { aliases: ['typed-alias'], costs: { prompt_tokens: 0.5, completion_tokens: 1.5, audio_minutes: 0 } },
    );
  });

  test('a delete asks for confirmation inline; Escape cancels and Enter confirms', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'Delete kb-typed' }).focus();
    await page.keyboard.press('Enter');
    await focusOn(page, 'Yes, delete');
    await page.keyboard.press('Escape');
    await focusOn(page, 'Delete kb-typed'); // back to the button
    await page.keyboard.press('Enter');
    await focusOn(page, 'Yes, delete');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Router "kb-typed" deleted.' }).waitFor();
    assert.equal((await gw.get('/v1/admin/routers/kb-typed')).status, 404);
  });
});

describe('forms', () => {
  test('every input, select and textarea of every page has a label', async () => {
    const { page } = admin;
    for (const hash of ['#/chat', '#/usage', '#/account', '#/routers', '#/providers', '#/users', '#/user/bo']) {
      await visit(page, hash);
      await page.locator('form').first().waitFor();
      const unlabelled = await page.evaluate(() => {
        const controls: { labels: unknown[] | null; outerHTML: string; getAttribute(name: string): string | null }[] = [
          ...document.querySelectorAll('input, select, textarea'),
        ];
        return controls
          .filter((control) => (control.labels?.length ?? 0) === 0 && !control.getAttribute('aria-label'))
          .map((control) => control.outerHTML);
      });
      assert.deepEqual(unlabelled, [], `unlabelled controls on ${hash}`);
    }
  });

  test('the router form checks fields before sending and moves focus to the first problem', async () => {
    const { page } = admin;
    await visit(page, '#/routers');
    await page.getByLabel('Name').waitFor();
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(request.url());
    });
    await page.getByLabel('Aliases').fill('ok, not ok!');
    await page.getByLabel('Prompt token cost (per 1M tokens)').fill('-1');
    await page.getByLabel('Completion token cost (per 1M tokens)').fill('0.1234567891');
    await page.getByRole('button', { name: 'Create router' }).click();
    await eventually(
      () => focused(page),
      (f) => f.id === 'router-name',
      'focus on the first problem',
    );
    assert.equal(await problemOf(page, 'router-name'), 'Required.');
    assert.equal(
      await problemOf(page, 'router-aliases'),
      'Each alias: Start with a letter or digit; use only letters, digits and . _ : / @ + -',
    );
    assert.equal(await problemOf(page, 'router-prompt'), 'A number of 0 or more, with at most 9 decimals.');
    assert.equal(await problemOf(page, 'router-completion'), 'A number of 0 or more, with at most 9 decimals.');
    assert.deepEqual(posts, [], 'nothing was sent');
    await screenshot(page, 'form-problems');
  });

  test("the server's field errors are shown next to their field", async () => {
    const { page } = admin;
    await visit(page, '#/routers');
    await page.getByLabel('Name').fill('kb-other');
    await page.getByLabel('Aliases').fill('kb-alias');
    await page.getByRole('button', { name: 'Create router' }).click();
    await eventually(
      () => problemOf(page, 'router-aliases'),
      (p) => !p.startsWith('('),
      'the 409 shown at Aliases',
    );
    assert.equal(await problemOf(page, 'router-aliases'), '"kb-alias" is already used by router "kb-chat"');
    await eventually(
      async () => (await focused(page)).id,
      (id) => id === 'router-aliases',
      'focus on Aliases',
    );

    await visit(page, '#/users');
    await page.getByLabel('Id (optional)').fill('bo');
    await page.getByLabel('Name').fill('Another Bo');
    await page.getByRole('textbox', { name: 'Budget', exact: true }).fill('1.1234567');
    await page.getByRole('button', { name: 'Create user' }).click();
    assert.equal(await problemOf(page, 'user-budget'), 'A number of 0 or more, with at most 6 decimals.');
    await page.getByRole('textbox', { name: 'Budget', exact: true }).fill('3');
    await page.getByRole('button', { name: 'Create user' }).click();
    await eventually(
      () => problemOf(page, 'user-id'),
      (p) => !p.startsWith('('),
      'the 409 shown at Id',
    );
    assert.equal(await problemOf(page, 'user-id'), 'A user with id "bo" already exists');
    await screenshot(page, 'form-server-error');
  });

  test("a provider's key is write-only, and a URL is required for vllm, without /v1", async () => {
    const { page } = admin;
    await visit(page, '#/providers');
    await page.getByLabel('Router').selectOption('kb-chat');
    await page.getByLabel('Type').selectOption('vllm');
    await page.getByLabel('Model name').fill('meta-llama/Llama-3.1-8B-Instruct');
    await page.getByRole('button', { name: 'Create provider' }).click();
    assert.equal(await problemOf(page, 'provider-url'), 'Required.');
    await page.getByLabel('URL').fill('http://vllm:8000/v1');
    await page.getByRole('button', { name: 'Create provider' }).click();
    assert.equal(await problemOf(page, 'provider-url'), 'Leave out /v1: the gateway adds the API path.');
    await page.getByLabel('URL').fill('http://vllm:8000');
    await page.getByLabel('Id (optional)').fill('kb-vllm');
    await page.getByLabel('API key of the backend').fill('sk-very-secret-value');
    await page.getByRole('button', { name: 'Create provider' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'kb-vllm' }) });
    await row.waitFor();
    assert.equal(await row.getByRole('cell').nth(4).textContent(), 'set');

    await row.getByRole('button', { name: 'Edit kb-vllm' }).click();
    assert.equal(await page.getByLabel('API key of the backend').inputValue(), '', 'the key is never filled in');
    await page.getByText('Write-only. Currently set; leave empty to keep it.').waitFor();
    assert.ok(!(await page.content()).includes('sk-very-secret-value'), 'the key is nowhere in the page');
    await page.getByLabel('Timeout (seconds)').fill('15');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByRole('status').filter({ hasText: 'Provider "kb-vllm" saved' }).waitFor();
    const saved = (await gw.get('/v1/admin/providers/kb-vllm')).body;
    assert.deepEqual(
      { timeout: saved.timeout, has_key: saved.has_key, url: saved.url },
      { timeout: 15, has_key: true, url: 'http://vllm:8000' },
    );
  });
});

describe('a user without the admin role', () => {
  let user: OpenPage;
  before(async () => {
    user = await browser.open(gw.url);
  });

  test('sees no admin page, even by its address', async () => {
    await signIn(user.page, userKey);
    await user.page.goto('/playground/#/routers');
    await user.page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await user.page.getByText('This page is for admins.').waitFor();
  });

  test('reads a rate limit (429) and a model that is gone (404) as sentences', async () => {
    const { page } = user;
    await visit(page, '#/chat');
    await sendChatMessage(page, 'kb-limited', 'first');
    await page.locator('.turn.assistant .usage').first().waitFor();
    await sendChatMessage(page, 'kb-limited', 'second');
    const limited = page.getByRole('alert').first();
    await limited.waitFor();
    assert.match(
      (await limited.textContent()) ?? '',
      /^Too many requests\. Rate limit reached: 1 requests per minute on this model; retry in \d+s\.$/,
    );
    await screenshot(page, 'error-rate-limit');

    assert.equal((await gw.delete('/v1/admin/routers/kb-gone')).status, 200);
    await sendChatMessage(page, 'kb-gone', 'anyone there?');
    const gone = page.getByRole('alert').nth(1);
    await gone.waitFor();
    assert.equal(await gone.textContent(), 'That model does not exist: Model not found. Pick another model.');
  });

  test("an admin sees that user's requests on the user's page and raises their budget", async () => {
    const { page } = admin;
    await visit(page, '#/user/bo');
    await page.getByRole('heading', { name: 'Bo', level: 1 }).waitFor();
    await eventually(
      () => applyUsageFilter(page),
      (rows) => rows === 3,
      "Bo's usage rows (one answered, two refused)",
    );
    const statuses = await page.locator('table.records tbody tr td:nth-child(7)').allTextContents();
    assert.deepEqual(statuses, ['404', '429', '200']);
    await page.getByRole('textbox', { name: 'Budget', exact: true }).fill('2.5');
    await page.getByLabel('Budget period').selectOption('weekly');
    await page.getByRole('button', { name: 'Save user' }).click();
    await page.getByRole('status').filter({ hasText: 'User "Bo" saved.' }).waitFor();
    const bo = (await gw.get('/v1/admin/users/bo')).body;
    assert.deepEqual({ budget: bo.budget, period: bo.budget_period }, { budget: 2.5, period: 'weekly' });
  });

  test('revoking the key in use (confirmed with the keyboard) signs the user out with the reason', async () => {
    const { page } = user;
    await visit(page, '#/account');
    await page.getByRole('button', { name: 'Revoke bo laptop' }).click();
    await page.getByText('This is the key you are signed in with; revoking it signs you out.').waitFor();
    await focusOn(page, 'Yes, revoke');
    await page.keyboard.press('Enter');
    const notice = page.getByText(/^You were signed out\./);
    await notice.waitFor();
    assert.equal(await notice.textContent(), 'You were signed out. Your API key was not accepted: This API key has been revoked.');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.deepEqual([...user.problems, ...admin.problems], [], 'no console errors (a CSP violation would be one)');
  });
});
