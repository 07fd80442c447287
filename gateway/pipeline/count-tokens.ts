// Anthropic's count_tokens: a Messages request's prompt counted as the gateway counts a chat prompt
// (o200k, the chat template's overhead included), which is what the hold and the usage of that
// request start from. Free, as Anthropic's is; the caller must still be allowed the router.
import { mayCall } from '../accounts/caller.ts';
import { parseWith } from '../api/payloads.ts';
import { messagesToChat } from '../translators/messages-over-chat.ts';
import { CountTokensRequest } from '../wire/anthropic-messages.ts';
import { errors } from '../api/api-error.ts';
import { countInSlices } from '../metering/tokens.ts';
import { promptTokenCount } from '../billing/usage-block.ts';
import type { SurfaceRequest, SurfaceServices } from './surface-request.ts';
import { routerOf } from './resolve.ts';

export async function countTokens(request: SurfaceRequest, services: SurfaceServices): Promise<object> {
  const router = routerOf('chat', request.body, services.routing);
  if (!mayCall(request.caller, router.spec.name)) throw errors.modelNotAllowed();
  // Counted as its chat translation (max_tokens does not count), the form every prompt is counted in.
  const chat = messagesToChat({ ...parseWith(CountTokensRequest, request.body), max_tokens: 1 });
  // Then a turn of the event loop, and the count a slice at a time: checking and translating
  // 16,000 blocks, then counting them, held the loop 68 ms in one go.
  await new Promise((resolve) => setImmediate(resolve));
  return { input_tokens: (await countInSlices((sink) => promptTokenCount('chat', chat, sink))).tokens };
}
