// Anthropic's Messages API on both sides: the request passes through as the caller made it
// (thinking, cache_control and all; its model the provider's), and the backend's message or
// events go back as they came, the router's name as the model. Metering reads the usage and the
// text here, from Anthropic's own fields; the closing message_delta and message_stop are the
// gateway's to send, Anthropic's own usage fields kept, the output as charged, cost and carbon added.
import type { UsageBlock } from '../api/usage-shape.ts';
import { anthropicError, MessagesAnswer, type MessagesEvent, type MessagesUsage } from '../wire/anthropic-messages.ts';
import type { JsonObject } from '../wire/openai-wire.ts';
import { messagesUsage } from './chat-over-messages.ts';
import { anthropicUsage, event, messageId, messageStart } from './messages-over-chat.ts';
import { sseEvent, type Translator } from './translator.ts';

/** Anthropic's own usage fields (input, cache and output tokens), the output as charged, and the gateway's cost and carbon. */
function ownUsage(reported: unknown, block: UsageBlock): JsonObject {
  const own = reported !== null && typeof reported === 'object' ? (reported as JsonObject) : {};
  return { ...own, output_tokens: block.completion_tokens, cost: block.cost, carbon: { ...block.carbon } };
}

export const MESSAGES_IDENTITY: Translator = {
  client: 'anthropic-messages',
  backend: 'anthropic-messages',
  request: (body) => body,
  answer(answer, exchange) {
    const message = MessagesAnswer.parse(answer);
    return {
      usage: messagesUsage(message.usage),
      text: () => message.content.flatMap((block) => (block.type === 'text' ? [String(block.text ?? '')] : [])).join(''),
      write: (usage) => ({ ...answer, model: exchange.model, usage: ownUsage(answer.usage, usage) }),
    };
  },
  stream(exchange, reading) {
    let started = false;
    /** The backend's closing message_delta, once it came: the gateway sends it, with its usage. */
    let ending: Extract<MessagesEvent, { type: 'message_delta' }> | undefined;
    /** message_start's usage: the input, cache reads and writes. */
    let startUsage: MessagesUsage | undefined;
    let output: unknown;
    const start = () => {
      if (started) return '';
      started = true;
      return messageStart(messageId(), exchange.model);
    };
    return {
      event(raw) {
        const passed = raw as MessagesEvent;
        switch (passed.type) {
          case 'message_start': {
            started = true;
            startUsage = passed.message?.usage;
            output = startUsage?.output_tokens;
            passed.message = { ...passed.message, model: exchange.model };
            break;
          }
          case 'content_block_delta':
            if (passed.delta?.type === 'text_delta' && typeof passed.delta.text === 'string' && passed.delta.text !== '')
              reading.text(passed.delta.text);
            break;
          case 'message_delta':
            ending = passed;
            if (typeof passed.usage?.output_tokens === 'number') output = passed.usage.output_tokens;
            return '';
          case 'message_stop':
            // The counts as Anthropic gave them (the input with its cache reads and writes), read as the chat reader reads them.
            reading.usage(messagesUsage(startUsage, output));
            return '';
        }
        return sseEvent(passed.type, passed);
      },
      end(usage) {
        const closing = ending
          ? event('message_delta', { delta: ending.delta, usage: ownUsage(ending.usage, usage) })
          : event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: anthropicUsage(usage) });
        return start() + closing + event('message_stop', {});
      },
      fail(usage, error) {
        const closing = event('message_delta', { delta: { stop_reason: null, stop_sequence: null }, usage: anthropicUsage(usage) });
        return start() + closing + event('error', { error: anthropicError(error).error });
      },
      final: () => undefined,
    };
  },
};
