// The configuration the store-outage tests share: one user with a budget and a priced router
// served by the simulator, so every chat needs the store to admit it.
import { chatModel, simulator, userWithKey, type GatewayConfig, type ModelEntry, type UserEntry } from './gateway-config.ts';

/** Dana (budget 5) with a fresh key, her configuration entry, and the header that authenticates as her. */
export function danaKey(): { readonly key: string; readonly user: UserEntry; readonly headers: { readonly authorization: string } } {
  const dana = userWithKey('dana', { name: 'Dana', budget: 5 }, 'd');
  return { key: dana.key, user: dana.entry, headers: dana.auth };
}

/** `user` (Dana) and the priced router `priced`, then `moreModels`. */
export function pricedConfig(user: UserEntry, moreModels: readonly ModelEntry[] = []): GatewayConfig {
  return {
    users: [user],
    models: [chatModel('priced', [simulator()], { costs: { prompt_tokens: 1, completion_tokens: 2 } }), ...moreModels],
  };
}

/** The router `priced`, whose answers cost 0.01 each when asked as CENT_REQUEST asks (10 completion tokens at 1000 per million). */
export function centModel(): ModelEntry {
  return chatModel('priced', [simulator()], { costs: { prompt_tokens: 0, completion_tokens: 1000 } });
}

/** A chat request to `priced` that holds and costs 0.01. */
export const CENT_REQUEST = { model: 'priced', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } as const;
