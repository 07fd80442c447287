// Small helpers for the routing tests: a model entry with OpenAI-format providers, a chat call,
// which provider `model` names a fake backend received, and a URL nobody listens on.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FakeBackend } from './fake-server.ts';
import type { TestGateway } from './gateway.ts';
import type { Strategy } from '../../core/resources/kinds.ts';
import type { ModelEntry } from './gateway-config.ts';

export interface ProviderEntry {
  /** Model name on the backend: it is what tells the providers apart in the fakes' records. */
  readonly model: string;
  readonly url: string;
  /** Seconds (provider args.timeout). */
  readonly timeout?: number;
  /** The provider's API key (args.api_key). */
  readonly key?: string;
}

/** One `models:` entry of type text-generation whose providers are vLLM (OpenAI-format) backends. */
export function modelEntry(id: string, strategy: Strategy, providers: readonly ProviderEntry[]): ModelEntry {
  return {
    id,
    type: 'text-generation',
    load_balancing_strategy: strategy,
    providers: providers.map((p) => ({
      model: p.model,
      type: 'vllm',
      args: { api_url: p.url, ...(p.timeout !== undefined && { timeout: p.timeout }), ...(p.key !== undefined && { api_key: p.key }) },
    })),
  };
}

/** The one user message the tests' chats send. */
export const USER_MESSAGE = [{ role: 'user', content: 'Say hello' }];

/** A chat request for `model`, as the bootstrap admin unless `auth` says otherwise, with `extra` fields. */
export function chat(gw: TestGateway, model: string, auth?: Record<string, string>, extra: Record<string, unknown> = {}) {
  return gw.post('/v1/chat/completions', { model, messages: USER_MESSAGE, ...extra }, auth);
}

/** The provider `model` names the fakes received, in the order the requests arrived at each. */
export function receivedModels(fake: FakeBackend): string[] {
  return fake.requests.map((request) => String(request.body?.model));
}

/** How many requests each provider `model` name received. */
export function countByModel(...fakes: FakeBackend[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const fake of fakes) for (const model of receivedModels(fake)) counts[model] = (counts[model] ?? 0) + 1;
  return counts;
}

/** A loopback URL whose port was free a moment ago: connecting to it is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
