// Every provider type, bound to its adapter. The `satisfies` clause makes a type without an
// adapter (or an adapter without a type) a compile error; schemas derive from PROVIDER_TYPES.
import type { ProviderType } from '../../core/resources/kinds.ts';
import type { ProviderAdapter } from './adapter.ts';
import { openai } from './openai.ts';
import { vllm } from './vllm.ts';
import { mistral } from './mistral.ts';
import { ollama } from './ollama.ts';
import { anthropic } from './anthropic.ts';
import { tei } from './tei.ts';
import { simulator } from './simulator.ts';

export const ADAPTERS = {
  openai,
  vllm,
  mistral,
  ollama,
  anthropic,
  tei,
  simulator,
} as const satisfies { [T in ProviderType]: ProviderAdapter<T> };

export function adapterFor<T extends ProviderType>(type: T): ProviderAdapter<T> {
  return ADAPTERS[type] as unknown as ProviderAdapter<T>;
}
