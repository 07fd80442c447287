// What the translators' golden tests feed them: requests as callers send them, and answers and
// event sequences as each backend's API sends them (shaped after the providers' documented
// examples: OpenAI's chat completions and Responses, Anthropic's Messages).
import { errors } from '../../../gateway/api/api-error.ts';
import type { Exchange } from '../../../gateway/translators/translator.ts';
import type { ChatMessage } from '../../../gateway/wire/openai-chat.ts';
import type { JsonObject } from '../../../gateway/wire/openai-wire.ts';

export const EXCHANGE: Exchange = { model: 'router-a', endpoint: 'chat', earlier: [], response: undefined };

export const RESPONSES_EXCHANGE: Exchange = {
  ...EXCHANGE,
  response: {
    id: 'resp_0123456789abcdef01234567',
    model: 'router-a',
    instructions: 'Be brief.',
    metadata: { team: 'search' },
    previousResponseId: null,
    store: true,
    maxOutputTokens: 64,
  },
};

export const BROKEN = errors.upstreamInterrupted('the connection was reset');

// --- OpenAI's chat completions -------------------------------------------------------------

export const CHAT_REQUEST: JsonObject = {
  model: 'router-a',
  messages: [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
    { role: 'tool', tool_call_id: 'call_2', content: 'a mat' },
  ],
  max_tokens: 64,
  stop: 'END',
  temperature: 0.2,
  user: 'u-1',
  tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up a word', parameters: { type: 'object' } } }],
  tool_choice: 'required',
  stream: true,
  stream_options: { include_usage: true },
};

export const CHAT_ANSWER: JsonObject = {
  id: 'chatcmpl-backend1',
  object: 'chat.completion',
  created: 1764000000,
  model: 'meta-llama/Llama-3.1-8B-Instruct',
  choices: [{ index: 0, message: { role: 'assistant', content: 'A cat on a mat.' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
};

export const CHAT_TOOL_ANSWER: JsonObject = {
  ...CHAT_ANSWER,
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"dog"}' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
};

const chunk = (choices: unknown[], extra: JsonObject = {}): JsonObject => ({
  id: 'chatcmpl-backend1',
  object: 'chat.completion.chunk',
  created: 1764000000,
  model: 'meta-llama/Llama-3.1-8B-Instruct',
  choices,
  ...extra,
});

export const CHAT_CHUNKS: JsonObject[] = [
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  chunk([{ index: 0, delta: { content: 'A cat' }, finish_reason: null }]),
  chunk([{ index: 0, delta: { content: ' on a mat.' }, finish_reason: null }]),
  chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  chunk([], { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }),
];

export const CHAT_TOOL_CHUNKS: JsonObject[] = [
  chunk([{ index: 0, delta: { role: 'assistant', content: 'Looking.' }, finish_reason: null }]),
  chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '' } }] } }]),
  chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] } }]),
  chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"dog"}' } }] } }]),
  chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }], { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }),
];

// --- Anthropic's Messages ------------------------------------------------------------------

export const MESSAGES_REQUEST: JsonObject = {
  model: 'router-a',
  max_tokens: 64,
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { q: 'cat' } }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: 'a cat' }] },
        { type: 'text', text: 'And now?' },
      ],
    },
  ],
  stop_sequences: ['END'],
  temperature: 0.2,
  top_k: 40,
  metadata: { user_id: 'u-1' },
  tools: [{ name: 'lookup', description: 'Looks up a word', input_schema: { type: 'object' } }],
  tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true },
  stream: true,
};

export const MESSAGES_ANSWER: JsonObject = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'A cat on a mat.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 4, cache_creation_input_tokens: 3, cache_read_input_tokens: 5, output_tokens: 5 },
};

export const MESSAGES_TOOL_ANSWER: JsonObject = {
  ...MESSAGES_ANSWER,
  content: [
    { type: 'thinking', thinking: 'The user wants a dog.', signature: 'sig' },
    { type: 'text', text: 'Looking.' },
    { type: 'tool_use', id: 'toolu_09', name: 'lookup', input: { q: 'dog' } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 12 },
};

export const MESSAGES_EVENTS: JsonObject[] = [
  {
    type: 'message_start',
    message: {
      ...MESSAGES_ANSWER,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 4, cache_read_input_tokens: 8, output_tokens: 1 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'ping' },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'A cat' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' on a mat.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } },
  { type: 'message_stop' },
];

export const MESSAGES_TOOL_EVENTS: JsonObject[] = [
  { type: 'message_start', message: { ...MESSAGES_ANSWER, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'A dog.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_09', name: 'lookup', input: {} } },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"dog"}' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } },
  { type: 'message_stop' },
];

// --- OpenAI's Responses --------------------------------------------------------------------

export const RESPONSES_REQUEST: JsonObject = {
  model: 'router-a',
  instructions: 'Be brief.',
  input: [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'What is in this image?' },
        { type: 'input_image', image_url: 'https://example.com/cat.png' },
      ],
    },
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"cat"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'a cat' },
  ],
  tools: [{ type: 'function', name: 'lookup', description: 'Looks up a word', parameters: { type: 'object' } }],
  tool_choice: { type: 'function', name: 'lookup' },
  text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
  max_output_tokens: 64,
  metadata: { team: 'search' },
  previous_response_id: 'resp_0123456789abcdef00000000',
  stream: true,
};

/** The conversation RESPONSES_REQUEST continues, as stored. */
export const EARLIER: ChatMessage[] = [
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi! Send me an image.' },
];

export const RESPONSE_ANSWER: JsonObject = {
  id: 'resp_backend',
  object: 'response',
  created_at: 1764000000,
  status: 'completed',
  model: 'gpt-4.1',
  output: [
    { type: 'reasoning', id: 'rs_1', summary: [] },
    {
      type: 'message',
      id: 'msg_b1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'A cat on a mat.', annotations: [] }],
    },
  ],
  store: false,
  usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 8 }, output_tokens: 5, total_tokens: 17 },
};

export const RESPONSE_EVENTS: JsonObject[] = [
  { type: 'response.created', sequence_number: 0, response: { ...RESPONSE_ANSWER, status: 'in_progress', output: [], usage: null } },
  { type: 'response.in_progress', sequence_number: 1, response: { ...RESPONSE_ANSWER, status: 'in_progress', output: [], usage: null } },
  {
    type: 'response.output_item.added',
    sequence_number: 2,
    output_index: 0,
    item: { type: 'message', id: 'msg_b1', status: 'in_progress', role: 'assistant', content: [] },
  },
  { type: 'response.output_text.delta', sequence_number: 3, item_id: 'msg_b1', output_index: 0, content_index: 0, delta: 'A cat' },
  { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_b1', output_index: 0, content_index: 0, delta: ' on a mat.' },
  {
    type: 'response.output_item.done',
    sequence_number: 5,
    output_index: 0,
    item: RESPONSE_ANSWER.output && (RESPONSE_ANSWER.output as JsonObject[])[1],
  },
  { type: 'response.completed', sequence_number: 6, response: RESPONSE_ANSWER },
];
