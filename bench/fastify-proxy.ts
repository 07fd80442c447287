// A reference contender of the benchmark: the bare Node proxy's work (node-proxy.ts) in a
// Fastify route, with Fastify's own JSON body parser and nothing else (no logger, hook, schema or
// plugin). Beside the bare Node proxy it shows what the framework the gateway is built on costs
// over node:http by itself, which the gateway cannot go below without leaving Fastify.
// Run as `node bench/fastify-proxy.ts <port> <upstream origin>`.
import Fastify from 'fastify';
import { Pool } from 'undici';
import { forwardChat } from './proxy-work.ts';

const [port, origin] = [Number(process.argv[2]), process.argv[3]];
if (!port || !origin) {
  process.stderr.write('usage: node bench/fastify-proxy.ts <port> <upstream origin>\n');
  process.exit(2);
}
const upstream = new Pool(origin);
const app = Fastify({ logger: false, keepAliveTimeout: 75_000 });

app.post('/v1/chat/completions', async (request, reply) => {
  const answer = await forwardChat(upstream, request.body as Record<string, unknown>);
  reply.header('content-type', 'application/json; charset=utf-8');
  return answer;
});

await app.listen({ port, host: '127.0.0.1', backlog: 4096 });
