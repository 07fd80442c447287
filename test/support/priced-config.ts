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
