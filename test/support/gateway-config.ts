// The configuration file of a test gateway, as a typed object: the compiler checks what a test
// writes against the resources' own input types (core/resources), where an inline YAML string
// was checked only once a gateway read it, and a typo in a field name went unseen. Written out
// as JSON, which is YAML, so the gateway reads it through the very parser a user's file goes
// through (gateway/config/config-file.ts). Tests of the file format itself keep writing YAML.
import { generateKey } from '../../core/accounts/api-keys.ts';
import type { KeyLimitsInput } from '../../core/resources/key-limits.ts';
import type { ProviderType } from '../../core/resources/kinds.ts';
import type { ProviderSpecInput } from '../../core/resources/provider.ts';
import type { RouterSpecInput } from '../../core/resources/router.ts';
import type { TeamSpecInput } from '../../core/resources/team.ts';
import type { UserSpecInput } from '../../core/resources/user.ts';

/** A provider entry's `args`: the backend's address, key and timeout, or the simulator's behaviour. */
export interface ProviderArgs {
  readonly api_url?: string;
  /** Several replicas of one engine, in place of api_url. */
  readonly api_urls?: readonly string[];
  readonly api_key?: string;
  readonly timeout?: number;
  readonly max_concurrent?: number;
  readonly latency_ms?: number;
  readonly tokens_per_second?: number;
  readonly completion_tokens?: number;
}

/** The provider fields every kind has, written as they are in the file (the rest go in `args`). */
type ProviderFields = Omit<Extract<ProviderSpecInput, { type: 'vllm' }>, 'id' | 'type' | 'router' | 'model_name' | 'url' | 'key'>;

/** One entry of a model's `providers:` list. */
export interface ProviderEntry extends ProviderFields {
  /** The model name on the backend. */
  readonly model: string;
  readonly type: ProviderType;
  /** Default `<model id>-<index>`. */
  readonly id?: string;
  readonly args?: ProviderArgs;
}

/** One entry of `models:`: a router, named by `id`, with its providers. */
export interface ModelEntry extends Omit<RouterSpecInput, 'name'> {
  readonly id: string;
  readonly providers: readonly ProviderEntry[];
}

export interface KeyEntry extends KeyLimitsInput {
  readonly name: string;
  /** The secret itself, or `${VARIABLE}` read from the gateway's environment. */
  readonly key: string;
}

export interface UserEntry extends UserSpecInput {
  readonly keys?: readonly KeyEntry[];
}

/** A whole configuration file. */
export interface GatewayConfig {
  readonly teams?: readonly TeamSpecInput[];
  readonly users?: readonly UserEntry[];
  readonly models: readonly ModelEntry[];
}

/** The file's text. */
export function configText(config: GatewayConfig): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** A provider served by the gateway's built-in simulator, backend model `sim` unless `fields` say otherwise. */
export function simulator(fields: Partial<ProviderEntry> = {}): ProviderEntry {
  return { model: 'sim', type: 'simulator', ...fields };
}

/** A router of type text-generation with `providers`, and `fields` besides. */
export function chatModel(
  id: string,
  providers: readonly ProviderEntry[],
  fields: Partial<Omit<ModelEntry, 'id' | 'providers'>> = {},
): ModelEntry {
  return { id, type: 'text-generation', ...fields, providers };
}

/** A user with one fresh API key, for the configuration; `auth` is the header that authenticates as them. */
export interface UserWithKey {
  readonly entry: UserEntry;
  readonly key: string;
  readonly auth: { readonly authorization: string };
}

/** User `id` with `fields` and one fresh key named `keyName`. */
export function userWithKey(id: string, fields: Omit<UserEntry, 'id' | 'keys'>, keyName = `${id}'s key`): UserWithKey {
  const key = generateKey().secret;
  return { entry: { id, ...fields, keys: [{ name: keyName, key }] }, key, auth: { authorization: `Bearer ${key}` } };
}
