// What one scrape of a hostile vLLM /metrics costs the gateway's event loop (finding 13): each
// text of test/support/hostile-metrics.ts (about 1 MB of comments or label sets) and a normal
// one, served by another process, scraped `SCRAPES` times one after the other by
// scrapeMetrics (metrics-scrape.ts), as a gateway does twice a second per replica. Prints, per
// text, the CPU time of this process per scrape (its median and worst) and what the scrape gave.
// Not part of `npm run bench`: a quick measure, run by hand.
//   node bench/engines/scrape-hostile.ts
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scrapeMetrics } from '../../gateway/routing/engine/metrics-scrape.ts';
import { hostileTexts, READ_SERIES } from '../../test/support/hostile-metrics.ts';

const SCRAPES = 60;
const WARMUP = 30;

function texts(): [string, string][] {
  return [['a normal text (the series read)', READ_SERIES], ...Object.entries(hostileTexts())];
}

/** The child: serves text i at /<i>/metrics, and says its port. */
async function serve(): Promise<void> {
  const all = texts().map(([, text]) => Buffer.from(text));
  const server = createServer((req, res) => {
    const body = all[Number(req.url?.split('/')[1])];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-length': body.length }).end(body);
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as AddressInfo).port));
}

async function measure(): Promise<void> {
  const child = fork(import.meta.filename, ['serve'], { stdio: 'inherit' });
  const [port] = (await once(child, 'message')) as [number];
  try {
    for (const [i, [name, text]] of texts().entries()) {
      const url = `http://127.0.0.1:${port}/${i}`;
      const busy: number[] = [];
      let outcome = '';
      for (let n = 0; n < WARMUP + SCRAPES; n++) {
        const before = performance.eventLoopUtilization();
        const result = await scrapeMetrics(url, { signal: AbortSignal.timeout(10_000) });
        if (n >= WARMUP) busy.push(performance.eventLoopUtilization(before).active);
        outcome = result.ok ? `ok ${JSON.stringify(result.load)}` : `refused: ${result.error}`;
      }
      busy.sort((a, b) => a - b);
      const median = busy[Math.floor(busy.length / 2)]!;
      console.log(
        `${name} (${Buffer.byteLength(text)} bytes): event loop per scrape median ${median.toFixed(2)} ms, worst ${busy.at(-1)!.toFixed(2)} ms; ${outcome.slice(0, 120)}`,
      );
    }
  } finally {
    child.kill();
  }
}

if (process.argv[2] === 'serve') await serve();
else await measure();
