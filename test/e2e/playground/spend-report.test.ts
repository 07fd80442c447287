// The spend report on the Playground's Usage page, in a real browser: an admin sees every user's
// (or router's) spend over a range, dearest first, charts one and downloads it as CSV; a user sees
// only themselves and their keys, and cannot group by router.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { goTo, rowOf, signIn } from './steps.ts';

const bed = testBed();

const key = generateKey().secret;
let gw: TestGateway;
let browser: PlaygroundBrowser;
let admin: OpenPage;

before(async () => {
  gw = await bed.gateway({
    users: [{ id: 'spender', name: 'Spender', keys: [{ name: 'k', key: key }] }],
    models: [
      {
        id: 'priced',
        type: 'text-generation',
        costs: { prompt_tokens: 1000, completion_tokens: 1000 },
        providers: [{ model: 'sim', type: 'simulator' }],
      },
    ],
  });
  for (let i = 0; i < 3; i++) {
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'priced', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}` },
    );
    assert.equal(answer.status, 200);
  }
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
  await signIn(admin.page, gw.adminKey);
});

after(async () => {
  await browser?.close();
});

describe('the spend report', () => {
  test("an admin sees each user's and each router's spend, and downloads it as CSV", async () => {
    const { page } = admin;
    await goTo(page, 'Usage');
    const row = await eventually(
      () => rowOf(page, 'spender'),
      (cells) => cells[0] === '3',
      "spender's row with its 3 requests",
    );
    assert.match(row[2]!, /\d/, 'a cost');
    await screenshot(page, 'usage-spend-report');

    await page.getByLabel('Group by').selectOption('router');
    await page.getByRole('button', { name: 'Show report' }).click();
    await eventually(
      () => rowOf(page, 'priced'),
      (cells) => cells[0] === '3',
      "the router's row",
    );

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    const text = await readFile((await download.path())!, 'utf8');
    const lines = text.trimEnd().split('\r\n');
    assert.equal(lines[0]!.split(',')[0], 'router');
    assert.equal(lines[1]!.split(',').slice(0, 2).join(), 'priced,3');
  });

  test('a user sees their own row only, charts it, and may not group by router', async () => {
    const user = await browser.open(gw.url);
    await signIn(user.page, key);
    await goTo(user.page, 'Usage');
    const row = await eventually(
      () => rowOf(user.page, 'spender'),
      (cells) => cells[0] === '3',
      'their own row',
    );
    assert.ok(row.length > 0);
    assert.equal(await user.page.getByRole('rowheader', { name: 'admin', exact: true }).count(), 0);
    await user.page.getByText('Spend per day of user spender').waitFor();
    const groups = await user.page.getByLabel('Group by').locator('option').allTextContents();
    assert.deepEqual(groups, ['team', 'user', 'api key']);
  });
});
