// OpenAI's chat completions on the wire, as the translators read and write it: the request's
// messages, content parts, tools and tool calls, and the answer's choices, whole or streamed.
// Requests reach the translators checked by the chat endpoint's schema (endpoints/request-schemas.ts),
// which leaves what the gateway does not need loose; a translator that reads those parts reads
// them through these schemas (`catch`: a part malformed is read as absent, as a backend would
// ignore it). Answers from a chat backend are not parsed on the request path (it is the hot path):
// their types here say what a translator may find, and every read still checks its value.
import { z } from 'zod';

const text = z.string().catch('');

export const ChatContentPart = z.looseObject({
  type: z.string().catch(''),
  text: z.string().optional().catch(undefined),
  image_url: z.looseObject({ url: text }).optional().catch(undefined),
});
export type ChatContentPart = z.output<typeof ChatContentPart>;

export const ChatContent = z
  .union([z.string(), z.array(ChatContentPart)])
  .nullish()
  .catch(undefined);
export type ChatContent = z.output<typeof ChatContent>;

export const ChatToolCall = z.looseObject({
  id: z.string().optional().catch(undefined),
  type: z.string().optional().catch(undefined),
  function: z.looseObject({ name: text, arguments: z.unknown() }).catch({ name: '', arguments: undefined }),
});
export type ChatToolCall = z.output<typeof ChatToolCall>;

export const ChatMessage = z.looseObject({
  role: z.string(),
  content: ChatContent,
  name: z.string().optional().catch(undefined),
  tool_calls: z.array(ChatToolCall).optional().catch(undefined),
  tool_call_id: z.unknown().optional(),
});
export type ChatMessage = z.output<typeof ChatMessage>;

export const ChatTool = z.looseObject({
  type: z.string().optional().catch(undefined),
  function: z
    .looseObject({ name: z.unknown().optional(), description: z.unknown().optional(), parameters: z.unknown() })
    .catch({ name: undefined, description: undefined, parameters: undefined }),
});

/** A chat request, as a translator to another API reads it. */
export const ChatRequest = z.looseObject({
  model: z.unknown().optional(),
  messages: z.array(ChatMessage).catch([]),
  max_tokens: z.number().nullish().catch(undefined),
  max_completion_tokens: z.number().nullish().catch(undefined),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullish()
    .catch(undefined),
  temperature: z.unknown().optional(),
  top_p: z.unknown().optional(),
  top_k: z.unknown().optional(),
  user: z.unknown().optional(),
  tools: z.array(ChatTool).optional().catch(undefined),
  tool_choice: z
    .union([z.string(), z.looseObject({ function: z.looseObject({ name: z.unknown() }).optional().catch(undefined) })])
    .optional()
    .catch(undefined),
});
export type ChatRequest = z.output<typeof ChatRequest>;

/** One choice of an answer or a chunk: `message` in a whole answer, `delta` in a chunk. */
export interface ChatChoice {
  index?: number;
  message?: ChatAnswerMessage;
  delta?: ChatAnswerMessage;
  finish_reason?: string | null;
  /** vLLM: the stop string that matched. */
  stop_reason?: unknown;
  /** Completions: the text. */
  text?: unknown;
  [key: string]: unknown;
}

/** A message or delta as a backend answers it: any field may be missing or of another type. */
export interface ChatAnswerMessage {
  role?: unknown;
  content?: unknown;
  reasoning_content?: unknown;
  tool_calls?: unknown;
  [key: string]: unknown;
}

/** A chat completion, or one chunk of a streamed one. */
export interface ChatAnswer {
  id?: unknown;
  object?: unknown;
  created?: unknown;
  model?: unknown;
  choices?: ChatChoice[];
  usage?: unknown;
  [key: string]: unknown;
}
