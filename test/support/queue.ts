// Helpers of the queue-mode tests: a configuration with one queue-mode router over fake
// OpenAI-format backends and users of given priorities, and a chat call that reports what a
// client sees: status, error code and Retry-After.
import { generateKey } from '../../core/accounts/api-keys.ts';
import type { Strategy } from '../../core/resources/kinds.ts';
import type { FakeBackend } from './fake-server.ts';
import type { GatewayConfig, ModelEntry, UserEntry } from './gateway-config.ts';

export interface QueueProvider {
  readonly id: string;
  readonly backend: FakeBackend;
  readonly maxConcurrent?: number;
}

export interface QueueConfig {
  readonly strategy?: Strategy;
  readonly providers: readonly QueueProvider[];
  /** The router's queue field. */
  readonly queue?: ModelEntry['queue'];
  /** Users by id, with their priority; each gets a key (keys[id]). */
  readonly priorities?: Record<string, number>;
}

export interface QueueSetup {
  readonly config: GatewayConfig;
  /** The API key of each user. */
  readonly keys: Record<string, string>;
}

/** A router `chat` in queue mode; each provider's backend model name is its id, so the fakes' records tell them apart. */
export function queueConfig(config: QueueConfig): QueueSetup {
  const keys: Record<string, string> = {};
  const users = Object.entries(config.priorities ?? {}).map(([id, priority]): UserEntry => {
    const key = generateKey().secret;
    keys[id] = key;
    return { id, name: id, priority, keys: [{ name: `${id}'s key`, key }] };
  });
  const model: ModelEntry = {
    id: 'chat',
    type: 'text-generation',
    routing_mode: 'queue',
    load_balancing_strategy: config.strategy ?? 'least_busy',
    ...(config.queue && { queue: config.queue }),
    providers: config.providers.map((p) => ({
      id: p.id,
      model: p.id,
      type: 'vllm',
      ...(p.maxConcurrent !== undefined && { max_concurrent: p.maxConcurrent }),
      args: { api_url: p.backend.url },
    })),
  };
  return { config: { users, models: [model] }, keys };
}

export interface ChatOutcome {
  readonly status: number;
  readonly code: string | undefined;
  readonly message: string | undefined;
  readonly retryAfter: string | null;
}

/** One chat request to `url` with `key`; `content` tells the request apart in the fakes' records. */
export async function queueChat(url: string, key: string, content = 'hello', signal?: AbortSignal): Promise<ChatOutcome> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content }] }),
    signal,
  });
  const body = (await response.json()) as { error?: { code: string; message: string } };
  return {
    status: response.status,
    code: body.error?.code,
    message: body.error?.message,
    retryAfter: response.headers.get('retry-after'),
  };
}

/** The content of the message a fake backend received, in the order requests arrived. */
export function contents(backend: FakeBackend): string[] {
  return backend.requests.map((request) => String(request.body?.messages?.[0]?.content));
}
