// Series metrics must print exactly what prom-client's own Counter and Histogram print for the
// same updates: the gateway swaps them in for speed, and scrapers must not see a difference.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../../gateway/observability/series-metrics.ts';

const BUCKETS = [0.01, 0.1, 1, 10];
const OBSERVED: [string, number][] = [
  ['chat', 0.005],
  ['chat', 0.05],
  ['chat', 0.1],
  ['chat', 42],
  ['embeddings', 0.5],
  ['chat', 1],
];

function histograms() {
  const expected = new Registry();
  const actual = new Registry();
  const config = { name: 'latency_seconds', help: 'Latency.', labelNames: ['endpoint'] as const, buckets: BUCKETS };
  return {
    expected,
    actual,
    reference: new Histogram({ ...config, registers: [expected] }),
    series: new SeriesHistogram({ ...config, registers: [actual] }),
  };
}

describe('SeriesHistogram', () => {
  test('prints the same buckets, sums and counts as a prom-client Histogram', async () => {
    const { expected, actual, reference, series } = histograms();
    for (const [endpoint, value] of OBSERVED) {
      reference.observe({ endpoint }, value);
      series.series({ endpoint }).observe(value);
    }
    assert.equal(await actual.metrics(), await expected.metrics());
    assert.match(await actual.metrics(), /^latency_seconds_bucket\{le="0.1",endpoint="chat"\} 3$/m);
  });

  test('asking twice for one label set gives the same series', () => {
    const { series } = histograms();
    assert.equal(series.series({ endpoint: 'chat' }), series.series({ endpoint: 'chat' }));
  });

  test('reset zeroes the series in place: a series kept by a caller goes on counting', async () => {
    const { expected, actual, reference, series } = histograms();
    const chat = series.series({ endpoint: 'chat' });
    chat.observe(0.5);
    series.reset();
    reference.reset();
    chat.observe(0.05);
    reference.observe({ endpoint: 'chat' }, 0.05);
    assert.equal(await actual.metrics(), await expected.metrics());
  });
});

describe('SeriesCounter', () => {
  test('prints the same totals as a prom-client Counter, on every scrape', async () => {
    const expected = new Registry();
    const actual = new Registry();
    const config = { name: 'tokens_total', help: 'Tokens.', labelNames: ['router', 'kind'] as const };
    const reference = new Counter({ ...config, registers: [expected] });
    const counter = new SeriesCounter({ ...config, registers: [actual] });
    const prompt = counter.series({ router: 'chat', kind: 'prompt' });
    prompt.inc(11);
    reference.inc({ router: 'chat', kind: 'prompt' }, 11);
    counter.series({ router: 'chat', kind: 'completion' }).inc();
    reference.inc({ router: 'chat', kind: 'completion' });
    assert.equal(await actual.metrics(), await expected.metrics());
    prompt.inc(4);
    reference.inc({ router: 'chat', kind: 'prompt' }, 4);
    assert.equal(await actual.metrics(), await expected.metrics());
    assert.match(await actual.metrics(), /^tokens_total\{router="chat",kind="prompt"\} 15$/m);
  });
});
