// Finding 13: a hostile vLLM's /metrics (about 1 MB of comment lines, or of label sets) costs a
// bounded scrape. A fake engine on a real socket serves each text of test/support/hostile-metrics.ts;
// the scrape (metrics-scrape.ts) still gives the right load, parses only the lines of the series
// routing reads, stops reading once it has them, reads no more than MAX_METRICS_BYTES, and refuses
// a text with more label sets of a series read than the scanner's bound. Counted in what the scrape
// took in (bytes, lines, lines parsed), never in time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryStore } from '../../../core/store/memory/memory-store.ts';
import { ProviderSpec } from '../../../core/resources/provider.ts';
import { RouterSpec } from '../../../core/resources/router.ts';
import { SNAPSHOT_FORMAT } from '../../../core/resources/snapshot.ts';
import { vllmTargets } from '../../../gateway/routing/engine/engine-targets.ts';
import { MAX_METRICS_BYTES, scrapeMetrics } from '../../../gateway/routing/engine/metrics-scrape.ts';
import { DEFAULT_SCAN_LIMITS } from '../../../gateway/routing/engine/sample-scanner.ts';
import { ScrapedMetricsSource } from '../../../gateway/routing/engine/scraped-metrics-source.ts';
import { ProviderStates } from '../../../gateway/routing/provider-state.ts';
import { RoutingTable } from '../../../gateway/routing/routing-table.ts';
import { startFakeOpenAI } from '../../support/fake-openai.ts';
import type { FakeBackend } from '../../support/fake-server.ts';
import { commentLines, otherLabelSets, READ_LOAD, READ_SERIES, readLabelSets } from '../../support/hostile-metrics.ts';

/** The lines of READ_SERIES that are samples of a series read. */
const READ_SAMPLES = 5;

let engine: FakeBackend;

before(async () => {
  engine = await startFakeOpenAI();
});

after(() => engine?.close());

async function scrape(text: string) {
  engine.metricsText(text);
  return scrapeMetrics(engine.url, { signal: AbortSignal.timeout(30_000) });
}

describe('a hostile /metrics text', () => {
  test('the series read, then 1 MB of comments: read, and the rest is not', async () => {
    const text = READ_SERIES + commentLines(10_000);
    const outcome = await scrape(text);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.deepEqual(outcome.load, READ_LOAD);
    assert.equal(outcome.scanned?.samples, READ_SAMPLES);
    assert.ok(outcome.scanned.bytes < text.length / 4, `stopped early: ${outcome.scanned.bytes} of ${text.length} bytes read`);
  });

  for (const [what, text] of [
    ['500 kB of comments and 10,000 label sets of another metric', commentLines(5_000) + otherLabelSets(10_000) + READ_SERIES],
    ['20,000 label sets of another metric', otherLabelSets(20_000) + READ_SERIES],
  ] as const) {
    test(`${what}, then the series read: the load right, only the series read parsed`, async () => {
      const outcome = await scrape(text);
      assert.ok(outcome.ok, JSON.stringify(outcome));
      assert.deepEqual(outcome.load, READ_LOAD);
      assert.equal(outcome.scanned?.samples, READ_SAMPLES, 'no other line parsed');
      assert.ok(outcome.scanned.bytes <= MAX_METRICS_BYTES);
    });
  }

  test('20,000 label sets of a series read: refused past the bound of lines parsed', async () => {
    const outcome = await scrape(readLabelSets(20_000));
    assert.equal(outcome.ok, false);
    assert.match(outcome.ok ? '' : outcome.error, /more than 1024 samples of the metrics read/);
    assert.equal(outcome.scanned?.samples, DEFAULT_SCAN_LIMITS.maxSamples + 1);
  });

  test('2 MB of comments before the series read: refused at the byte bound, no more of it read', async () => {
    const outcome = await scrape(commentLines(20_000) + READ_SERIES);
    assert.equal(outcome.ok, false);
    assert.match(outcome.ok ? '' : outcome.error, /more than 1048576 bytes/);
    assert.ok((outcome.scanned?.bytes ?? Infinity) <= MAX_METRICS_BYTES, `read ${outcome.scanned?.bytes} bytes`);
    assert.equal(outcome.scanned?.samples, 0);
  });

  test('the series read first, a text past the byte bound after them: read', async () => {
    const outcome = await scrape(READ_SERIES + commentLines(30_000));
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.deepEqual(outcome.load, READ_LOAD);
  });

  test("the gateway's signals from a hostile engine are those of its series", async () => {
    engine.metricsText(commentLines(5_000) + otherLabelSets(10_000) + READ_SERIES);
    const router = RouterSpec.parse({ name: 'chat', type: 'text-generation' });
    const provider = ProviderSpec.parse({ id: 'e1', type: 'vllm', url: engine.url, router: 'chat', model_name: 'm' });
    const table = RoutingTable.build(
      { format: SNAPSHOT_FORMAT, version: 'v1', routers: [router], providers: [provider] },
      new ProviderStates(),
    );
    const source = new ScrapedMetricsSource({
      store: new MemoryStore({ usageRetentionMs: 86_400_000 }).engineSignals,
      owner: 'standalone',
      intervalMs: 60_000,
      timeoutMs: 30_000,
    });
    try {
      source.follow(table);
      await source.tick();
      const [key] = vllmTargets(table).map((target) => target.key) as [string];
      const signals = source.signals(key);
      assert.deepEqual(
        [signals?.waiting, signals?.running, signals?.kvCacheUsage, signals?.prefixQueries, signals?.prefixHits],
        [3, 2, 0.25, 1000, 250],
      );
    } finally {
      source.stop();
    }
  });
});
