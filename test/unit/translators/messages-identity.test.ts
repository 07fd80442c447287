// Anthropic's Messages to an Anthropic backend (the identity): the request passes as it was made,
// the message and events come back as Anthropic sent them (thinking blocks and all), the router's
// name as the model; the closing message_delta carries Anthropic's own usage fields with the
// output as charged and the gateway's cost and carbon; a stream broken off ends with an error event.
import { describe } from 'node:test';
import { MESSAGES_IDENTITY } from '../../../gateway/translators/messages-identity.ts';
import { goldenTests } from './golden.ts';
import {
  BROKEN,
  EXCHANGE,
  MESSAGES_ANSWER,
  MESSAGES_EVENTS,
  MESSAGES_REQUEST,
  MESSAGES_TOOL_ANSWER,
  MESSAGES_TOOL_EVENTS,
} from './wire-samples.ts';

describe('Anthropic to Anthropic (the identity)', () => {
  goldenTests('messages-identity', MESSAGES_IDENTITY, EXCHANGE, [
    { name: 'a request goes as it came', request: { ...MESSAGES_REQUEST, thinking: { type: 'enabled', budget_tokens: 1024 } } },
    { name: 'a whole answer', answer: MESSAGES_ANSWER },
    { name: 'a whole answer with thinking and a tool call', answer: MESSAGES_TOOL_ANSWER },
    { name: 'a stream of text', events: MESSAGES_EVENTS },
    { name: 'a stream of thinking and a tool call', events: MESSAGES_TOOL_EVENTS },
    { name: 'a stream broken off', events: MESSAGES_EVENTS.slice(0, 4), breaksWith: BROKEN },
    { name: 'a stream broken off before it started', events: [], breaksWith: BROKEN },
  ]);
});
