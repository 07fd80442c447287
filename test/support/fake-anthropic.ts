// A fake of Anthropic's hosted API: POST /v1/messages, whole or streamed as Anthropic's event
// sequence, with usage as Anthropic reports it; a tool call when the behaviour asks for one; a
// thinking block first when the request turns thinking on; prompt-cache reads in the usage when
// its system prompt is marked for caching; the behaviour's `usage`, when set, is the input part of
// the usage reported instead (input tokens, cache reads and writes), whole and in message_start.
import { startFakeServer, words, type FakeBackend } from './fake-server.ts';

export const ANTHROPIC_TEXT = 'Hello from the fake Anthropic';
export const ANTHROPIC_INPUT_TOKENS = 13;
/** Prompt tokens read from the cache, reported when the request marks a system block with cache_control. */
export const ANTHROPIC_CACHE_READ_TOKENS = 100;
export const ANTHROPIC_THINKING = 'Let me think about that.';

export function startFakeAnthropic(): Promise<FakeBackend> {
  return startFakeServer(async (request, behaviour, response) => {
    if (behaviour.status) {
      return response.json(behaviour.status, { type: 'error', error: { type: 'api_error', message: `fake failure ${behaviour.status}` } });
    }
    if (request.path !== '/v1/messages')
      return response.json(404, { type: 'error', error: { type: 'not_found_error', message: 'no route' } });
    const body = request.body ?? {};
    const pieces = words(behaviour.text ?? ANTHROPIC_TEXT);
    const tool = behaviour.toolCall;
    const output = tool ? 7 : pieces.length;
    const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: body.model, stop_sequence: null };
    const thinking = body.thinking?.type === 'enabled';
    const cached = Array.isArray(body.system) && body.system.some((block: { cache_control?: unknown }) => block.cache_control);
    const inputUsage = behaviour.usage ?? {
      input_tokens: ANTHROPIC_INPUT_TOKENS,
      ...(cached && { cache_read_input_tokens: ANTHROPIC_CACHE_READ_TOKENS }),
    };
    if (!body.stream) {
      const content = [
        ...(thinking ? [{ type: 'thinking', thinking: ANTHROPIC_THINKING, signature: 'sig-fake' }] : []),
        ...(tool
          ? [{ type: 'tool_use', id: tool.id, name: tool.name, input: JSON.parse(tool.arguments) }]
          : [{ type: 'text', text: pieces.join('') }]),
      ];
      return response.json(200, {
        ...message,
        content,
        stop_reason: tool ? 'tool_use' : 'end_turn',
        usage: { ...inputUsage, output_tokens: output },
      });
    }
    response.startStream('text/event-stream');
    const send = (type: string, data: object) => response.chunk(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const start = {
      message: { ...message, content: [], stop_reason: null, usage: { ...inputUsage, output_tokens: 1 } },
    };
    if (!(await send('message_start', start))) return;
    // With thinking on, a thinking block comes first and the answer's block is the second.
    const index = thinking ? 1 : 0;
    if (thinking) {
      if (!(await send('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }))) return;
      if (!(await send('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: ANTHROPIC_THINKING } }))) return;
      if (!(await send('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-fake' } }))) return;
      if (!(await send('content_block_stop', { index: 0 }))) return;
    }
    if (tool) {
      if (!(await send('content_block_start', { index, content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} } })))
        return;
      if (!(await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: tool.arguments } }))) return;
    } else {
      if (!(await send('content_block_start', { index, content_block: { type: 'text', text: '' } }))) return;
      for (const piece of pieces) if (!(await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }))) return;
    }
    if (!(await send('content_block_stop', { index }))) return;
    if (
      !(await send('message_delta', {
        delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: output },
      }))
    )
      return;
    if (!(await send('message_stop', {}))) return;
    response.end();
  });
}
