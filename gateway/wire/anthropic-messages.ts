// Anthropic's Messages API on the wire (POST /v1/messages), its one description in the gateway:
// the request a caller sends (checked strictly where it is translated to another API, loosely
// where it passes through), the message a backend answers, the events of its stream, and the
// vocabulary both directions share (stop reasons, error types). The translators
// (gateway/translators/) and the Anthropic adapter read and write these shapes; nothing else
// spells a Messages field.
import { z } from 'zod';

const Text = z.looseObject({ type: z.literal('text'), text: z.string() });
const ImageSource = z.union([
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: z.string() }),
]);
const Image = z.looseObject({ type: z.literal('image'), source: ImageSource });
const ToolUse = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const ToolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.union([Text, Image]))]).optional(),
  is_error: z.boolean().optional(),
});
const Block = z.discriminatedUnion('type', [Text, Image, ToolUse, ToolResult]);

const Message = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(Block).min(1, 'must hold at least one content block')]),
});

const Tool = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.looseObject({}),
});

export const ToolChoice = z.union([
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({ type: z.literal('tool'), name: z.string(), disable_parallel_tool_use: z.boolean().optional() }),
]);

export const MessagesRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(Message).min(1, 'must hold at least one message'),
  max_tokens: z.number().int().min(1).max(10_000_000),
  system: z.union([z.string(), z.array(Text)]).optional(),
  stop_sequences: z.array(z.string()).max(16).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).optional(),
  stream: z.boolean().optional(),
  thinking: z.undefined({ message: 'extended thinking is not supported by this gateway' }).optional(),
});
export type MessagesRequest = z.output<typeof MessagesRequest>;

/** What a router served natively by Anthropic accepts: Anthropic's API checks the rest. */
export const NativeMessagesRequest = MessagesRequest.extend({
  messages: z
    .array(
      z.strictObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })).min(1, 'must hold at least one content block')]),
      }),
    )
    .min(1, 'must hold at least one message'),
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  tools: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  tool_choice: z.looseObject({ type: z.string() }).optional(),
  thinking: z.looseObject({ type: z.string() }).optional(),
});
export type NativeMessagesRequest = z.output<typeof NativeMessagesRequest>;

/** POST /v1/messages/count_tokens: the same, without max_tokens. */
export const CountTokensRequest = MessagesRequest.omit({ max_tokens: true, stream: true, stop_sequences: true }).extend({
  max_tokens: z.number().int().min(1).optional(),
});

export type MessagesBlock = z.output<typeof Block>;

/** What a Messages answer or event says it used; every count may be missing. */
export const MessagesUsage = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
export type MessagesUsage = z.output<typeof MessagesUsage>;

/** A whole answer: a message of content blocks (text, tool_use, and what chat has no words for). */
export const MessagesAnswer = z.looseObject({
  type: z.literal('message'),
  model: z.string().optional(),
  content: z.array(z.looseObject({ type: z.string() })).catch([]),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: MessagesUsage.optional().catch(undefined),
});
export type MessagesAnswer = z.output<typeof MessagesAnswer>;

/** One event of a streamed answer, by its `type`; the fields a translator reads are typed, the rest kept. */
export type MessagesEvent =
  | { type: 'message_start'; message?: { usage?: MessagesUsage; [k: string]: unknown }; [k: string]: unknown }
  | { type: 'content_block_start'; index: number; content_block: { type: string; [k: string]: unknown }; [k: string]: unknown }
  | { type: 'content_block_delta'; index: number; delta: { type: string; [k: string]: unknown }; [k: string]: unknown }
  | { type: 'content_block_stop'; index: number; [k: string]: unknown }
  | { type: 'message_delta'; delta?: { stop_reason?: string | null; [k: string]: unknown }; usage?: MessagesUsage; [k: string]: unknown }
  | { type: 'message_stop' | 'ping'; [k: string]: unknown }
  | { type: 'error'; error?: { type?: string; message?: string }; [k: string]: unknown };

/** The event types of a complete stream, in the order Anthropic sends them (`ping` anywhere). */
export const MESSAGES_EVENT_TYPES = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
] as const;

/**
 * Why generation stopped: Anthropic's stop reasons and OpenAI's finish reasons, one table for both
 * directions. A stop sequence is `stop` in chat (vLLM names the sequence in `stop_reason`).
 */
const FINISH_OF_STOP: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
};

/** Anthropic's stop reason as a chat finish reason (anything unknown: `stop`). */
export function finishOfStop(stopReason: unknown): string {
  return (typeof stopReason === 'string' && FINISH_OF_STOP[stopReason]) || 'stop';
}

/** A chat finish reason (and the stop sequence a backend names) as Anthropic's stop reason and sequence. */
export function stopOfFinish(finish: unknown, stopSequence: unknown): { stop_reason: string; stop_sequence: string | null } {
  if (finish === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (finish === 'tool_calls' || finish === 'function_call') return { stop_reason: 'tool_use', stop_sequence: null };
  if (typeof stopSequence === 'string') return { stop_reason: 'stop_sequence', stop_sequence: stopSequence };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

/** Anthropic's error type for a status (its SDK picks its error class by the status). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** Anthropic's error envelope. */
export function anthropicError(error: { readonly status: number; readonly message: string }) {
  return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } };
}
