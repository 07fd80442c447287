// The upstream of the queue benchmark's LLM-shaped run: an OpenAI-format chat backend whose
// answers take a random 1 to 2 s (or the fixed latency given), counting its own requests in flight.
// The answer's `id` carries how long this backend took (`dur-<ms>`), so the client can tell its
// wait in the gateway's queue from the backend's time. GET /stats answers {inFlight, peak, served}.
// Run as `node bench/queue/slow-upstream.ts <port> <min ms> <max ms>`.
import { createServer } from 'node:http';

const [port, minMs, maxMs] = process.argv.slice(2).map(Number);
if (!port || !(minMs! >= 0) || !(maxMs! >= minMs!)) {
  process.stderr.write('usage: node bench/queue/slow-upstream.ts <port> <min ms> <max ms>\n');
  process.exit(2);
}
let inFlight = 0;
let peak = 0;
let served = 0;

createServer({ keepAliveTimeout: 75_000 }, (request, response) => {
  if (request.url === '/stats') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ inFlight, peak, served }));
    return;
  }
  if (request.url === '/stats/reset') {
    peak = inFlight;
    served = 0;
    response.writeHead(204).end();
    return;
  }
  inFlight++;
  peak = Math.max(peak, inFlight);
  const started = performance.now();
  request.resume();
  const delay = minMs! + Math.random() * (maxMs! - minMs!);
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    inFlight--;
  };
  response.once('close', finish);
  request.once('end', () =>
    setTimeout(() => {
      const took = Math.round(performance.now() - started);
      served++;
      const body = JSON.stringify({
        id: `dur-${took}`,
        object: 'chat.completion',
        created: 1700000000,
        model: 'bench',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Foxes are small omnivorous mammals.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
      });
      finish();
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
    }, delay),
  );
}).listen(port, '127.0.0.1', 4096);
