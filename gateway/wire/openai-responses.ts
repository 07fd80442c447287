// OpenAI's Responses API on the wire (POST /v1/responses), its one description in the gateway:
// the request a caller sends (checked strictly where it is translated to chat, loosely where it
// passes through to a backend with a Responses API of its own), the Response a backend answers,
// and the events of its stream. The translators (gateway/translators/) read and write these
// shapes; nothing else spells a Responses field.
import { z } from 'zod';

export const InputText = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });
export const InputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().optional(),
  file_id: z.string().optional(),
});
export const InputContent = z.union([z.string(), z.array(z.union([InputText, InputImage]))]);

export const InputMessage = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: InputContent,
});
export const InputFunctionCall = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});
export const InputFunctionOutput = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string(), output: z.string() });
// Messages first: most items are, and a union tries its options in order (each failure costs its issues).
export const InputItem = z.union([InputMessage, InputFunctionCall, InputFunctionOutput]);

export const FunctionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.looseObject({}).nullish(),
  strict: z.boolean().nullish(),
});
const Tool = z.looseObject({ type: z.string() }).superRefine((tool, ctx) => {
  if (tool.type !== 'function')
    ctx.addIssue({
      code: 'custom',
      message: `hosted tools (${tool.type}) run on OpenAI's platform only; this gateway offers function tools`,
    });
  else if (!FunctionTool.safeParse(tool).success) ctx.addIssue({ code: 'custom', message: 'a function tool needs a name' });
});

export const TextFormat = z.union([
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({ type: z.literal('json_schema'), name: z.string(), schema: z.looseObject({}), strict: z.boolean().nullish() }),
]);

export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItem).min(1, 'must hold at least one item')]),
  instructions: z.string().nullish(),
  tools: z.array(Tool).nullish(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.literal('function'), name: z.string() })]).nullish(),
  max_output_tokens: z.number().int().min(1).max(10_000_000).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  text: z.looseObject({ format: TextFormat.optional() }).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  stream: z.boolean().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  user: z.string().nullish(),
});
export type ResponsesRequest = z.output<typeof ResponsesRequest>;

/** What a router served natively by OpenAI's Responses API accepts: any tool and input item; OpenAI checks them. */
export const NativeResponsesRequest = ResponsesRequest.extend({
  input: z.union([z.string(), z.array(z.looseObject({})).min(1, 'must hold at least one item')]),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: z.union([z.string(), z.looseObject({ type: z.string() })]).nullish(),
  text: z.looseObject({}).nullish(),
});

export type NativeResponsesRequest = z.output<typeof NativeResponsesRequest>;

/** A Response as a backend answers it; its usage's counts may be missing. */
export const ResponseAnswer = z.looseObject({
  object: z.literal('response'),
  status: z.string().optional(),
  output: z.array(z.looseObject({ type: z.string() })).catch([]),
  usage: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).nullish().catch(undefined),
});
export type ResponseAnswer = z.output<typeof ResponseAnswer>;

/** One event of a streamed Response, by its `type`: the closing ones carry the Response. */
export interface ResponsesEvent {
  type: string;
  sequence_number?: number;
  response?: Record<string, unknown>;
  item?: Record<string, unknown>;
  delta?: unknown;
  [k: string]: unknown;
}

/** The events that close a Response's stream, the gateway's to send with the usage it charged. */
export const CLOSING_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete']);
/** The events by which a backend breaks a Response's stream off. */
export const FAILING_EVENTS: ReadonlySet<string> = new Set(['response.failed', 'error']);
