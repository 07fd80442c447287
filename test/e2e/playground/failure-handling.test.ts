// Failure handling in the Playground, in a real browser: the Routers form sets a router's
// fallbacks (and refuses one that names no router, next to the field), the list shows them, and
// the Providers page marks a provider its health checks took out, with the reason.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { goTo, rowOf, signIn } from './steps.ts';
import { closedPortUrl } from '../../support/routing.ts';

const bed = testBed();

let backend: FakeBackend;
let gw: TestGateway;
let browser: PlaygroundBrowser;
let admin: OpenPage;

let deadUrl: string;

before(async () => {
  backend = await startFakeOpenAI();
  deadUrl = await closedPortUrl();
  const config: GatewayConfig = {
    models: [
      {
        id: 'primary',
        type: 'text-generation',
        providers: [
          {
            id: 'probed',
            model: 'm',
            type: 'vllm',
            args: { api_url: backend.url },
            health_check: { interval_seconds: 1, unhealthy_after: 1 },
          },
        ],
      },
      { id: 'spare', type: 'text-generation', providers: [{ model: 'sim', type: 'simulator' }] },
      {
        id: 'replicated',
        type: 'text-generation',
        providers: [
          {
            id: 'pair',
            model: 'm',
            type: 'vllm',
            args: { api_urls: [backend.url, deadUrl] },
            health_check: { interval_seconds: 1, unhealthy_after: 1 },
          },
        ],
      },
    ],
  };
  gw = await bed.gateway(config);
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
  await signIn(admin.page, gw.adminKey);
});

after(async () => {
  await browser?.close();
  await backend?.close();
});

describe('failure handling in the Playground', () => {
  test("the Routers form sets a router's fallbacks; one naming no router is refused next to the field", async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    await page.getByRole('button', { name: 'Edit primary' }).click();
    await page.getByLabel('Fallbacks').fill('nowhere');
    await page.getByRole('button', { name: 'Save router' }).click();
    await page.getByText('fallback "nowhere" of router "primary" does not exist').first().waitFor();

    await page.getByLabel('Fallbacks').fill('spare');
    await page.getByRole('button', { name: 'Save router' }).click();
    // Type, aliases, strategy, mode, waiting, fallbacks.
    await eventually(
      () => rowOf(page, 'primary'),
      (row) => row[5] === 'spare',
      'the row listing its fallback',
    );
    assert.deepEqual((await gw.get('/v1/admin/routers/primary')).body.fallbacks, ['spare']);
    await screenshot(page, 'routers-fallbacks');
  });

  test('the Providers page marks a provider taken out by its health checks, with the reason', async () => {
    const { page } = admin;
    backend.healthStatus(503);
    await goTo(page, 'Providers');
    const cells = await eventually(
      () => rowOf(page, 'probed'),
      (row) => (row.at(-2) ?? '').startsWith('unhealthy'),
      'the row marked unhealthy',
    );
    assert.match(cells.at(-2)!, /unhealthy: health check failed: the backend answered 503/);
    await screenshot(page, 'providers-unhealthy');

    backend.healthStatus(200);
    await eventually(
      () => rowOf(page, 'probed'),
      (row) => row.at(-2) === 'healthy',
      'the row healthy again',
    );
  });

  test('a provider with several replicas has a row for each, with its own health', async () => {
    const { page } = admin;
    await goTo(page, 'Providers');
    assert.ok((await rowOf(page, 'pair')).includes('2 replicas'));
    await eventually(
      () => rowOf(page, deadUrl),
      (row) => (row.at(-2) ?? '').startsWith('unhealthy'),
      'the refusing replica marked unhealthy',
    );
    await eventually(
      () => rowOf(page, backend.url),
      (row) => row.at(-2) === 'healthy',
      'the answering replica healthy',
    );
    await screenshot(page, 'providers-replicas');
  });
});
