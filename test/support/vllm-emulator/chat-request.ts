// A chat completion request as the emulator takes it: the body checked with zod (the fields vLLM
// reads that matter here; others are accepted and ignored, as vLLM ignores them), then turned into
// what the engine needs: the prompt's token count and block hashes, the completion length and the
// priority. Every refusal is the 4xx vLLM would give, with its message.
import { z } from 'zod';
import { badRequest, EmulatorError } from './errors.ts';
import { blockHashes } from './prefix-cache.ts';
import { promptTokens, type PromptMessage } from './prompt.ts';
import type { EngineRequest } from './engine.ts';
import type { EmulatorSettings } from './settings.ts';

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const message = z.looseObject({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});

const chatBody = z.looseObject({
  model: z.string().optional(),
  messages: z.array(message).min(1),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  priority: z.number().int().default(0),
  tools: z.array(z.unknown()).nullish(),
});

export interface ChatRequest {
  readonly model: string;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** Whether the caller set the completion length (the answer then ends with finish_reason "length"). */
  readonly lengthSet: boolean;
  readonly engine: EngineRequest;
}

/** Reads a parsed JSON body; throws EmulatorError with vLLM's status and message. */
export function readChatRequest(json: unknown, settings: EmulatorSettings): ChatRequest {
  const parsed = chatBody.safeParse(json);
  if (!parsed.success) throw badRequest(z.prettifyError(parsed.error));
  const body = parsed.data;
  if (body.model !== undefined && body.model !== settings.model) {
    throw new EmulatorError(404, 'NotFoundError', `The model \`${body.model}\` does not exist.`);
  }
  if (body.priority !== 0 && settings.scheduling_policy !== 'priority') {
    throw badRequest('Got priority != 0 but Priority scheduling is not enabled.');
  }
  const messages: PromptMessage[] = body.messages.map((m) => ({ role: m.role, text: messageText(m.content) }));
  const tokens = promptTokens(messages, body.tools ? JSON.stringify(body.tools) : undefined);
  const asked = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  const room = settings.max_model_len - tokens.length;
  const maxTokens = asked ?? Math.min(settings.default_max_tokens, room);
  if (maxTokens > room || room < 1) {
    throw badRequest(
      `This model's maximum context length is ${settings.max_model_len} tokens. However, you requested ` +
        `${tokens.length + maxTokens} tokens (${tokens.length} in the messages, ${maxTokens} in the completion). ` +
        'Please reduce the length of the messages or completion.',
    );
  }
  return {
    model: settings.model,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    lengthSet: asked !== undefined,
    engine: {
      promptTokens: tokens.length,
      blockHashes: blockHashes(tokens, settings.block_size),
      maxTokens,
      priority: body.priority,
    },
  };
}

function messageText(content: z.infer<typeof message>['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('\n');
}
