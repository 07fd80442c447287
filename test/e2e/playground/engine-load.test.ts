// Engine load and cached prompt tokens in the Playground, in a real browser (issue 28, parts 5 and
// 7): the Providers page shows each replica's engine load as its vLLM /metrics last said it
// (waiting, running, KV use), marks a saturated one, and says when its signals fail; the Routers
// form sets and clears the prices of cached and cache-written prompt tokens; an answer's usage
// line shows the prompt tokens the backend served from its cache.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../../support/gateway.ts';
import { testBed } from '../../support/test-bed.ts';
import type { GatewayConfig } from '../../support/gateway-config.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { eventually, launchPlaygroundBrowser, screenshot, type OpenPage, type PlaygroundBrowser } from './browser.ts';
import { goTo, rowOf, sendChatMessage, signIn } from './steps.ts';

const bed = testBed();

const engineMetrics = (waiting: number) => `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} ${waiting}
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="m"} 0.42
`;

let busy: FakeBackend;
let calm: FakeBackend;
let gw: TestGateway;
let browser: PlaygroundBrowser;
let admin: OpenPage;

before(async () => {
  [busy, calm] = await Promise.all([startFakeOpenAI(), startFakeOpenAI()]);
  busy.metricsText(engineMetrics(7));
  calm.metricsText(engineMetrics(1));
  const config: GatewayConfig = {
    models: [
      {
        id: 'fleet-chat',
        type: 'text-generation',
        providers: [{ id: 'fleet', model: 'm', type: 'vllm', args: { api_urls: [busy.url, calm.url] } }],
      },
    ],
  };
  gw = await bed.gateway(config, { settings: { engineScrapeIntervalMs: 1000 } });
  browser = await launchPlaygroundBrowser();
  admin = await browser.open(gw.url);
  await signIn(admin.page, gw.adminKey);
});

after(async () => {
  await browser?.close();
  await Promise.all([busy?.close(), calm?.close()]);
});

/** The Providers page opened anew: it reads the routing view as it opens. */
async function providersPage(page: OpenPage['page']): Promise<void> {
  await goTo(page, 'Chat');
  await goTo(page, 'Providers');
}

/** A replica row's engine load cell: the row's cells are Key, Engine load, Timeout and Max concurrent (spanned), In use, Health, actions. */
const engineLoadOf = (row: readonly string[]) => row.at(-5) ?? '';

describe('engine load in the Playground', () => {
  test("the Providers page shows each replica's engine load, marks the saturated one, and says when its signals fail", async () => {
    const { page } = admin;
    await eventually(
      async () =>
        ((await gw.get('/v1/admin/routing')).body.providers as { engines: { signals: string }[] }[]).map((p) => p.engines[0]?.signals),
      (states) => states.every((s) => s === 'fresh'),
      'both engines read',
    );
    await providersPage(page);
    assert.ok((await rowOf(page, 'fleet')).includes('see replicas'), 'the provider row sends to its replicas');
    const busyRow = await eventually(
      () => rowOf(page, busy.url),
      (row) => engineLoadOf(row) !== '–',
      'the busy replica with its load',
    );
    assert.equal(engineLoadOf(busyRow), '7 waiting · 3 running · KV 42% · saturated', 'seven waiting is past the default five');
    assert.equal(engineLoadOf(await rowOf(page, calm.url)), '1 waiting · 3 running · KV 42%');
    await screenshot(page, 'providers-engine-load');

    busy.metricsText(undefined);
    await eventually(
      async () =>
        ((await gw.get('/v1/admin/routing')).body.providers as { replica: string; engines: { signals: string }[] }[]).find(
          (p) => p.replica === busy.url,
        )?.engines[0]?.signals,
      (state) => state === 'failing',
      'the failing scrape seen',
    );
    await providersPage(page);
    const failing = await eventually(
      () => rowOf(page, busy.url),
      (row) => engineLoadOf(row).startsWith('signals failing'),
      'the replica whose signals fail',
    );
    assert.match(engineLoadOf(failing), /answered 404/);
  });

  test('the Routers form sets and clears the prices of cached and cache-written prompt tokens', async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    await page.getByRole('button', { name: 'Edit fleet-chat' }).click();
    assert.equal(await page.getByLabel('Cached prompt token cost (per 1M tokens, optional)').inputValue(), '', 'unset: the prompt price');
    await page.getByLabel('Prompt token cost (per 1M tokens)').fill('2');
    await page.getByLabel('Cached prompt token cost (per 1M tokens, optional)').fill('0.5');
    await page.getByLabel('Cache-write prompt token cost (per 1M tokens, optional)').fill('2.5');
    await page.getByRole('button', { name: 'Save router' }).click();
    const saved = await eventually(
      async () => (await gw.get('/v1/admin/routers/fleet-chat')).body.costs,
      (costs) => costs.cached_prompt_tokens === 0.5,
      'the cached price saved',
    );
    assert.deepEqual(saved, {
      prompt_tokens: 2,
      completion_tokens: 0,
      audio_minutes: 0,
      cached_prompt_tokens: 0.5,
      cache_write_prompt_tokens: 2.5,
    });

    await page.getByText('Router "fleet-chat" saved.').waitFor();
    await page.getByRole('button', { name: 'Edit fleet-chat' }).click();
    assert.equal(
      await page.getByLabel('Cached prompt token cost (per 1M tokens, optional)').inputValue(),
      '0.5',
      'the form shows the price set',
    );
    await page.getByLabel('Cached prompt token cost (per 1M tokens, optional)').fill('');
    await page.getByLabel('Cache-write prompt token cost (per 1M tokens, optional)').fill('');
    await page.getByRole('button', { name: 'Save router' }).click();
    const cleared = await eventually(
      async () => (await gw.get('/v1/admin/routers/fleet-chat')).body.costs,
      (costs) => !('cached_prompt_tokens' in costs),
      'the cached price cleared',
    );
    assert.deepEqual(cleared, { prompt_tokens: 2, completion_tokens: 0, audio_minutes: 0 }, 'both cleared: the prompt price again');
  });

  test('an invalid cached price is refused next to its field', async () => {
    const { page } = admin;
    await goTo(page, 'Routers');
    await page.getByRole('button', { name: 'Edit fleet-chat' }).click();
    await page.getByLabel('Cached prompt token cost (per 1M tokens, optional)').fill('cheap');
    await page.getByRole('button', { name: 'Save router' }).click();
    const field = page.getByLabel('Cached prompt token cost (per 1M tokens, optional)');
    await eventually(
      () => field.getAttribute('aria-invalid'),
      (invalid) => invalid === 'true',
      'the field marked invalid',
    );
    assert.equal((await gw.get('/v1/admin/routers/fleet-chat')).body.costs.cached_prompt_tokens, undefined, 'nothing sent');
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  test("an answer's usage line shows the prompt tokens the backend served from its cache", async () => {
    const { page } = admin;
    for (const backend of [busy, calm])
      backend.behave({ usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16, prompt_tokens_details: { cached_tokens: 8 } } });
    await goTo(page, 'Chat');
    await sendChatMessage(page, 'fleet-chat', 'Hello again');
    const usage = page
      .locator('.turn.assistant')
      .first()
      .getByRole('definition')
      .filter({ hasText: /prompt/ })
      .first();
    await usage.waitFor();
    assert.equal(await usage.textContent(), '11 prompt (8 cached) + 5 completion = 16');
    await screenshot(page, 'chat-cached-tokens');
  });
});
