// The translator of each (client API, backend API) pair: the identity where both speak one API,
// a translator of its own where one side is chat, and a composition through chat for the rest
// (a Responses caller to an Anthropic backend). Adding an API is its wire schema
// (gateway/wire/), its pair with chat in each direction it is used, and its identity if
// backends speak it (docs/architecture.md, "Adding an API").
import type { Api } from '../wire/apis.ts';
import { CHAT_OVER_MESSAGES, MESSAGES_READER } from './chat-over-messages.ts';
import { MESSAGES_IDENTITY } from './messages-identity.ts';
import { MESSAGES_OVER_CHAT } from './messages-over-chat.ts';
import { OPENAI_IDENTITY } from './openai-chat.ts';
import { RESPONSES_IDENTITY } from './responses-identity.ts';
import { RESPONSES_OVER_CHAT, RESPONSES_WRITER } from './responses-over-chat.ts';
import { throughChat } from './through-chat.ts';
import type { Translator } from './translator.ts';

/** Client API -> backend API -> translator. A pair missing here has no way between its APIs. */
const TRANSLATORS: Readonly<Record<Api, Partial<Record<Api, Translator>>>> = {
  openai: {
    openai: OPENAI_IDENTITY,
    'anthropic-messages': CHAT_OVER_MESSAGES,
  },
  'anthropic-messages': {
    openai: MESSAGES_OVER_CHAT,
    'anthropic-messages': MESSAGES_IDENTITY,
  },
  'openai-responses': {
    openai: RESPONSES_OVER_CHAT,
    'anthropic-messages': throughChat(RESPONSES_WRITER, MESSAGES_READER),
    'openai-responses': RESPONSES_IDENTITY,
  },
};

/** The translator from `client`'s API to `backend`'s. */
export function translatorFor(client: Api, backend: Api): Translator {
  const translator = TRANSLATORS[client][backend];
  // An adapter answers in the caller's API only when it was sent the caller's request (identity) or in its own.
  if (!translator) throw new Error(`no translator from ${client} to ${backend}`);
  return translator;
}
