// A Responses caller, a chat backend: the request (after the stored conversation it continues,
// its instructions first) as chat, function tools, tool_choice and a JSON schema format carried
// over; a chat completion or its chunks as a Response or its event sequence, items added, filled
// and done in turn, with the gateway's usage; a stream broken off ends with response.failed.
import { describe } from 'node:test';
import { RESPONSES_OVER_CHAT } from '../../../gateway/translators/responses-over-chat.ts';
import { goldenTests } from './golden.ts';
import {
  BROKEN,
  CHAT_ANSWER,
  CHAT_CHUNKS,
  CHAT_TOOL_ANSWER,
  CHAT_TOOL_CHUNKS,
  EARLIER,
  RESPONSES_EXCHANGE,
  RESPONSES_REQUEST,
} from './wire-samples.ts';

describe('Responses to chat', () => {
  goldenTests('responses-over-chat', RESPONSES_OVER_CHAT, RESPONSES_EXCHANGE, [
    { name: 'a request continuing a conversation', request: RESPONSES_REQUEST, exchange: { earlier: EARLIER } },
    { name: 'a request of one string', request: { model: 'router-a', input: 'Hi' } },
    { name: 'a whole answer', answer: CHAT_ANSWER },
    { name: 'a whole answer with a function call', answer: CHAT_TOOL_ANSWER },
    { name: 'a stream of text', events: CHAT_CHUNKS },
    { name: 'a stream of text and a function call', events: CHAT_TOOL_CHUNKS },
    { name: 'a stream broken off', events: CHAT_CHUNKS.slice(0, 2), breaksWith: BROKEN },
  ]);
});
