// Queue mode in the Playground, in a real browser against a gateway on Redis with its own router
// worker: the Routers page shows each router's routing mode and how many requests wait, and its
// form sets the mode; the Providers page shows each provider's max concurrent and the slots in use,
// and its form sets the cap; the user form sets a priority.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { goTo, rowOf, signIn } from './steps.ts';

const bed = testBed({ redis: true });

let backend: FakeBackend;
let gw: TestGateway;
let browser: PlaygroundBrowser;
let admin: OpenPage;

before(async () => {
  backend = await startFakeOpenAI();
  const config: GatewayConfig = {
    models: [
      {
        id: 'queued',
        type: 'text-generation',
        routing_mode: 'queue',
        providers: [{ id: 'capped', model: 'm', type: 'vllm', max_concurrent: 2, args: { api_url: backend.url } }],
      },
    ],
  };
  gw = await bed.gateway(config, { settings: { routerWorkers: 1 } });
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
  await signIn(admin.page, gw.adminKey);
});

after(async () => {
  await browser?.close();
  await backend?.close();
});

describe('queue mode in the Playground', () => {
  test("the Routers page shows the router's mode and how many requests wait, and the form changes the mode", async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    // Type, aliases, strategy, mode, waiting (read from GET /v1/admin/routing).
    const cells = await eventually(
      () => rowOf(page, 'queued'),
      (row) => row[3] === 'queue' && row[4] === '0',
      'the row with mode queue and nothing waiting',
    );
    assert.deepEqual(cells.slice(0, 5), ['text-generation', '–', 'shuffle', 'queue', '0']);
    await screenshot(page, 'routers-queue-mode');

    await page.getByRole('button', { name: 'Edit queued' }).click();
    assert.equal(await page.getByLabel('Routing mode').inputValue(), 'queue');
    await page.getByLabel('Routing mode').selectOption('local');
    await page.getByRole('button', { name: 'Save router' }).click();
    await eventually(
      () => rowOf(page, 'queued'),
      (row) => row[3] === 'local' && row[4] === '–',
      'the row in local mode',
    );
    assert.equal((await gw.get('/v1/admin/routers/queued')).body.routing_mode, 'local');
  });

  test("the Providers page shows the provider's max concurrent and the slots in use, and the form changes the cap", async () => {
    const { page } = admin;
    // Back to queue mode: the slots in use are the fleet's.
    await gw.patch('/v1/admin/routers/queued', { routing_mode: 'queue' });
    await goTo(page, 'Providers');
    const cells = await eventually(
      () => rowOf(page, 'capped'),
      (row) => row.at(-4) === '2' && row.at(-3) === '0',
      'the row with max concurrent 2 and no slot in use',
    );
    assert.equal(cells.at(-5), 'default', "no timeout of its own: the gateway's");
    assert.equal(cells.at(-2), 'ok', 'health: not checked, breaker closed');
    await page.getByRole('button', { name: 'Edit capped' }).click();
    assert.equal(await page.getByLabel('Max concurrent (optional)').inputValue(), '2');
    await page.getByLabel('Max concurrent (optional)').fill('3');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await eventually(
      () => rowOf(page, 'capped'),
      (row) => row.at(-4) === '3',
      'the row with max concurrent 3',
    );
    assert.equal((await gw.get('/v1/admin/providers/capped')).body.max_concurrent, 3);

    // A value out of range is refused in the form, next to the field.
    await page.getByRole('button', { name: 'Edit capped' }).click();
    await page.getByLabel('Max concurrent (optional)').fill('-1');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByText('A whole number from 0 to 1,000,000.').first().waitFor();
  });

  test("the user form sets a user's priority", async () => {
    const { page } = admin;
    await goTo(page, 'Users');
    await page.getByLabel('Id (optional)').fill('eve');
    await page.getByLabel('Name').fill('Eve');
    await page.getByLabel('Priority').fill('4');
    await page.getByRole('button', { name: 'Create user' }).click();
    await eventually(
      async () => (await gw.get('/v1/admin/users/eve')).body.priority,
      (priority) => priority === 4,
      "eve's priority",
    );
  });
});
