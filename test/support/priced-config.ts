// The configuration the store-outage tests share: one user with a budget, whose key comes from
// $DANA, and a priced router served by the simulator, so every chat needs the store to admit it.
import { generateKey } from '../../core/accounts/api-keys.ts';

/** Dana's key, and the environment that gives it to the configuration. */
export function danaKey(): { readonly key: string; readonly env: { DANA: string }; readonly headers: { authorization: string } } {
  const key = generateKey().secret;
  return { key, env: { DANA: key }, headers: { authorization: `Bearer ${key}` } };
}

/** Dana (budget 5) and the priced router `priced`, then `moreModels` (YAML list items, indented by 2). */
export function pricedConfig(moreModels = ''): string {
  return `
users:
  - id: dana
    name: Dana
    budget: 5
    keys: [{ name: d, key: "\${DANA}" }]
models:
  - id: priced
    type: text-generation
    costs: { prompt_tokens: 1, completion_tokens: 2 }
    providers: [{ model: sim, type: simulator }]
${moreModels}`;
}
