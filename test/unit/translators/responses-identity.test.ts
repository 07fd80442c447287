// OpenAI's Responses to a backend with a Responses API (the identity): the request passes with the
// stored conversation as input items before its own, and not stored on the backend (Tollgate
// keeps it); the Response and its events come back as sent, made this gateway's (its id, the
// router's name, what the caller asked of storing), the closing event with the usage charged.
import { describe } from 'node:test';
import { RESPONSES_IDENTITY } from '../../../gateway/translators/responses-identity.ts';
import { goldenTests } from './golden.ts';
import { BROKEN, EARLIER, RESPONSES_EXCHANGE, RESPONSES_REQUEST, RESPONSE_ANSWER, RESPONSE_EVENTS } from './wire-samples.ts';

describe('Responses to Responses (the identity)', () => {
  goldenTests('responses-identity', RESPONSES_IDENTITY, RESPONSES_EXCHANGE, [
    {
      name: 'a request continuing a conversation',
      request: { ...RESPONSES_REQUEST, tools: [{ type: 'web_search' }] },
      exchange: { earlier: EARLIER },
    },
    { name: 'a new request of one string', request: { model: 'router-a', input: 'Hi', store: true } },
    { name: 'a whole answer', answer: RESPONSE_ANSWER },
    { name: 'a stream', events: RESPONSE_EVENTS },
    { name: 'a stream broken off', events: RESPONSE_EVENTS.slice(0, 4), breaksWith: BROKEN },
    { name: 'a stream broken off before it started', events: [], breaksWith: BROKEN },
  ]);
});
