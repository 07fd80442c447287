// The work both reference proxies do for one non-streamed chat (node-proxy.ts on node:http,
// fastify-proxy.ts in a Fastify route), in one place so that they differ by their framework
// alone: forward the request under the upstream's model name, parse the answer, set `model` to
// the router's name and a cost in `usage`, serialise it.
import type { Pool } from 'undici';
import { MODEL } from './bodies.ts';

/** `request`: the body's text (parsed here: a bad one rejects) or the body parsed already. */
export async function forwardChat(upstream: Pool, request: string | Record<string, unknown>): Promise<string> {
  const body = typeof request === 'string' ? (JSON.parse(request) as Record<string, unknown>) : request;
  body.model = 'bench-upstream-model';
  const answered = await upstream.request({
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await answered.body.json()) as { model: string; usage: { cost?: number } };
  answer.model = MODEL.json;
  answer.usage.cost = 0.00011;
  return JSON.stringify(answer);
}
