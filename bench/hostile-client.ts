// One hostile client of `npm run bench -- --hostile` (bench/hostile.ts), in a process of its own so
// that building and sending its bodies never slows the normal client being measured: sends the
// hostile requests marked `loop` one after the other, again and again, for `seconds`, then prints
// how many it sent and their statuses as one JSON line.
//
//   node bench/hostile-client.ts <gateway url> <seconds> <broke key> <rich key>
import { Agent, request } from 'undici';
import { hostileRequests } from './hostile-bodies.ts';

const [url, seconds, broke, rich] = process.argv.slice(2);
if (!url || !seconds || !broke || !rich) {
  process.stderr.write('usage: node bench/hostile-client.ts <gateway url> <seconds> <broke key> <rich key>\n');
  process.exit(2);
}
const keys = { broke, rich };
const requests = hostileRequests().filter((h) => h.loop);
const agent = new Agent({ connections: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });
const statuses: Record<string, number> = {};
const until = Date.now() + Number(seconds) * 1000;
let sent = 0;
while (Date.now() < until) {
  for (const hostile of requests) {
    if (Date.now() >= until) break;
    try {
      const answer = await request(`${url}${hostile.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[hostile.user]}`, 'content-type': hostile.contentType },
        body: hostile.body,
        dispatcher: agent,
      });
      await answer.body.dump();
      statuses[answer.statusCode] = (statuses[answer.statusCode] ?? 0) + 1;
    } catch (error) {
      const kind = (error as Error).name;
      statuses[kind] = (statuses[kind] ?? 0) + 1;
    }
    sent++;
  }
}
await agent.close();
process.stdout.write(`${JSON.stringify({ sent, statuses })}\n`);
