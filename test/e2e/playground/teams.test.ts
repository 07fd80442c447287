// Teams in the Playground, in a real browser: a team admin sees the Teams page with their team's
// budget, spending and members (and no other team), the Users page with their team's users only,
// gives a member's key a budget of its own, and reads the usage report grouped by team with its
// chart. An admin creates a team from the Teams page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import { generateKey } from '../../../core/accounts/api-keys.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type PlaygroundBrowser } from './browser.ts';
import { goTo, navigationLinks, rowOf, signIn } from './steps.ts';

const bed = testBed();

const leadKey = generateKey().secret;
const devKey = generateKey().secret;
let gw: TestGateway;
let browser: PlaygroundBrowser;

before(async () => {
  gw = await bed.gateway({
    teams: [
      { id: 'red', name: 'Red team', budget: '100' },
      { id: 'blue', name: 'Blue team' },
    ],
    users: [
      { id: 'red-lead', name: 'Red lead', role: 'team_admin', team: 'red', keys: [{ name: 'k', key: leadKey }] },
      { id: 'red-dev', name: 'Red dev', team: 'red', keys: [{ name: 'k', key: devKey }] },
      { id: 'blue-dev', name: 'Blue dev', team: 'blue' },
    ],
    models: [
      {
        id: 'priced',
        type: 'text-generation',
        costs: { prompt_tokens: 1000, completion_tokens: 1000 },
        providers: [{ model: 'sim', type: 'simulator' }],
      },
    ],
  });
  for (let i = 0; i < 2; i++) {
    const answer = await gw.post(
      '/v1/chat/completions',
      { model: 'priced', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${devKey}` },
    );
    assert.equal(answer.status, 200);
  }
  browser = await launchPlaygroundBrowser();
});

after(async () => {
  await browser?.close();
});

describe('teams in the Playground', () => {
  test("a team admin sees their team's budget, spending and members, and their team's users only", async () => {
    const { page } = await browser.open(gw.url);
    await signIn(page, leadKey);
    assert.deepEqual(await navigationLinks(page), ['Chat', 'Transcribe', 'Usage', 'Account', 'Teams', 'Users']);
    await goTo(page, 'Teams');
    const row = await eventually(
      () => rowOf(page, 'Red team'),
      (cells) => cells.length > 0,
      'the red team row',
    );
    const [id, budget, , spent, , members] = row;
    assert.equal(id, 'red');
    assert.equal(budget, '100');
    assert.notEqual(spent, '0', "the member's requests are the team's");
    assert.match(members!, /red-dev/);
    assert.equal(await page.getByRole('rowheader', { name: 'Blue team' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Create team' }).count(), 0, 'team admins do not make teams');
    await screenshot(page, 'teams-team-admin');

    await goTo(page, 'Users');
    await eventually(
      () => rowOf(page, 'Red dev'),
      (cells) => cells.length > 0,
      'the member listed',
    );
    assert.equal(await page.getByRole('rowheader', { name: 'Blue dev' }).count(), 0);
  });

  test("a team admin gives a member's new key a budget, shown in the key list", async () => {
    const { page } = await browser.open(gw.url);
    await signIn(page, leadKey);
    await page.goto('/playground/#/user/red-dev');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Key name').fill('batch job');
    await page.getByLabel('Key budget (optional)').fill('2.5');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Secret key').waitFor();
    const row = await eventually(
      () => page.getByRole('row').filter({ hasText: 'batch job' }).getByRole('cell').allTextContents(),
      (cells) => cells.length > 0,
      'the new key listed',
    );
    assert.ok(row.includes('2.5'), `key budget in ${JSON.stringify(row)}`);
  });

  test('the usage report groups by team, and charts the team', async () => {
    const { page } = await browser.open(gw.url);
    await signIn(page, leadKey);
    await goTo(page, 'Usage');
    await page.getByLabel('Group by').selectOption('team');
    await page.getByRole('button', { name: 'Show report' }).click();
    const row = await eventually(
      () => rowOf(page, 'red'),
      (cells) => cells[0] === '2',
      "the team's row with its 2 requests",
    );
    assert.ok(row.length > 0);
    await page.getByText('Spend per day of team red').waitFor();
  });

  test('an admin creates a team from the Teams page', async () => {
    const { page } = await browser.open(gw.url);
    await signIn(page, gw.adminKey);
    await goTo(page, 'Teams');
    await page.getByLabel('Id').fill('green');
    await page.getByLabel('Name').fill('Green team');
    await page.getByLabel('Budget', { exact: true }).fill('40');
    await page.getByRole('button', { name: 'Create team' }).click();
    const row = await eventually(
      () => rowOf(page, 'Green team'),
      (cells) => cells.length > 0,
      'the new team listed',
    );
    assert.deepEqual(row.slice(0, 2), ['green', '40']);
    assert.equal((await gw.get('/v1/admin/teams/green')).body.budget, 40);
  });
});
