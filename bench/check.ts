// The one request before a measurement: the answer must be what a client expects (status, shape,
// usage; from the gateway also the router's name as `model` and a cost), or the results say so.
// Every mode of `npm run bench` that measures the contenders of bench/contenders.ts runs it.
import { MODEL, requestBody, type Mode } from './bodies.ts';
import type { ContenderId } from './report.ts';

/** One request before the load: the answer must be what a client expects, or the run says so. */
export async function check(contender: ContenderId, mode: Mode, url: string, headers: Record<string, string>): Promise<string | undefined> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: requestBody(mode),
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    if (response.status !== 200) return `status ${response.status}: ${text.slice(0, 200)}`;
    const gateway = contender.startsWith('gateway');
    if (mode === 'json') {
      const body = JSON.parse(text) as {
        model?: string;
        choices?: { message?: { content?: string } }[];
        usage?: { total_tokens?: number; cost?: number };
      };
      if (!body.choices?.[0]?.message?.content) return 'no choices[0].message.content';
      if (!body.usage?.total_tokens) return 'no usage';
      if (gateway && body.model !== MODEL.json) return `model is ${body.model}, not the router's name`;
      if (gateway && !(typeof body.usage.cost === 'number' && body.usage.cost > 0)) return 'no cost in usage';
      return undefined;
    }
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
      return `content-type ${response.headers.get('content-type')}`;
    if (!text.endsWith('data: [DONE]\n\n')) return 'the stream does not end with data: [DONE]';
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as { usage?: { total_tokens?: number; cost?: number } });
    const usage = events.find((e) => e.usage)?.usage;
    if (!usage?.total_tokens) return 'no usage chunk';
    if (gateway && !(typeof usage.cost === 'number' && usage.cost > 0)) return 'no cost in the usage chunk';
    return undefined;
  } catch (error) {
    return `request failed: ${(error as Error).message}`;
  }
}
