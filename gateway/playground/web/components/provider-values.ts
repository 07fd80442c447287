// The provider form's values, apart from how they are shown (provider-form.tsx): its fields as
// strings, a provider read back into them, the checks made before sending, and the merge patch
// sent. The router's prices are fields of this form too (spec 2.2), saved on the router.
import type { Provider, Router } from '../api.ts';
import { numberOrNull, textOrNull, type Values } from '../forms.tsx';
import { price } from '../format.ts';
import { URL_REQUIRED } from '../kinds.ts';
import { baseUrl, check, decimal, integer, number, required, resourceId } from '../rules.ts';

export type ProviderField =
  | 'id'
  | 'router'
  | 'type'
  | 'model'
  | 'url'
  | 'key'
  | 'clearKey'
  | 'timeout'
  | 'retries'
  | 'healthCheck'
  | 'healthInterval'
  | 'maxConcurrent'
  | 'prompt'
  | 'completion'
  | 'paramsTotal'
  | 'paramsActive'
  | 'zone'
  | 'pue'
  | 'latency'
  | 'tokensPerSecond'
  | 'completionTokens';

export const EMPTY_PROVIDER: Values<ProviderField> = {
  id: '',
  router: '',
  type: 'simulator',
  model: '',
  url: '',
  key: '',
  clearKey: 'false',
  timeout: '',
  retries: '',
  healthCheck: 'false',
  healthInterval: '15',
  maxConcurrent: '',
  prompt: '',
  completion: '',
  paramsTotal: '',
  paramsActive: '',
  zone: '',
  pue: '',
  latency: '0',
  tokensPerSecond: '0',
  completionTokens: '32',
};

/** The server's field paths, for showing its 400/404/409 next to the right field. */
export const PROVIDER_PARAMS: Record<string, ProviderField> = {
  id: 'id',
  router: 'router',
  type: 'type',
  model_name: 'model',
  url: 'url',
  key: 'key',
  timeout: 'timeout',
  retries: 'retries',
  'health_check.interval_seconds': 'healthInterval',
  max_concurrent: 'maxConcurrent',
  'carbon.params_total_b': 'paramsTotal',
  'carbon.params_active_b': 'paramsActive',
  'carbon.zone': 'zone',
  'carbon.pue': 'pue',
  'simulator.latency_ms': 'latency',
  'simulator.tokens_per_second': 'tokensPerSecond',
  'simulator.completion_tokens': 'completionTokens',
  // The router's costs, saved by a second request (PATCH /v1/admin/routers/...).
  'costs.prompt_tokens': 'prompt',
  'costs.completion_tokens': 'completion',
};

/** A provider as the form edits it, with its router's prices (empty when the router is unknown). */
export function providerValues(p: Provider, router: Router | undefined): Values<ProviderField> {
  const simulator = p.type === 'simulator' ? p.simulator : undefined;
  return {
    id: p.id,
    router: p.router,
    type: p.type,
    model: p.model_name,
    url: 'url' in p ? (p.url ?? '') : '',
    key: '',
    clearKey: 'false',
    timeout: p.timeout === undefined ? '' : String(p.timeout),
    retries: p.retries === undefined ? '' : String(p.retries),
    healthCheck: String(p.health_check?.enabled === true),
    healthInterval: String(p.health_check?.interval_seconds ?? 15),
    maxConcurrent: p.max_concurrent === undefined ? '' : String(p.max_concurrent),
    prompt: router ? price(router.costs.prompt_tokens) : '',
    completion: router ? price(router.costs.completion_tokens) : '',
    paramsTotal: p.carbon?.params_total_b?.toString() ?? '',
    paramsActive: p.carbon?.params_active_b?.toString() ?? '',
    zone: p.carbon?.zone ?? '',
    pue: p.carbon?.pue?.toString() ?? '',
    latency: String(simulator?.latency_ms ?? 0),
    tokensPerSecond: String(simulator?.tokens_per_second ?? 0),
    completionTokens: String(simulator?.completion_tokens ?? 32),
  };
}

export function validateProvider(v: Values<ProviderField>) {
  const simulator = v.type === 'simulator';
  return {
    id: check(v.id.trim(), [resourceId], true) ?? undefined,
    router: check(v.router, [required]) ?? undefined,
    model: check(v.model, [required]) ?? (v.model.length > 256 ? 'At most 256 characters.' : undefined),
    url: simulator
      ? undefined
      : (check(v.url.trim(), URL_REQUIRED.includes(v.type) ? [required, baseUrl] : [baseUrl], !URL_REQUIRED.includes(v.type)) ?? undefined),
    timeout: check(v.timeout, [number(0, 3600, { exclusiveMin: true })], true) ?? undefined,
    retries: check(v.retries, [integer(0, 10)], true) ?? undefined,
    healthInterval:
      !simulator && v.healthCheck === 'true' ? (check(v.healthInterval, [required, number(1, 3600)]) ?? undefined) : undefined,
    maxConcurrent: check(v.maxConcurrent, [integer(0, 1_000_000)], true) ?? undefined,
    prompt: check(v.prompt, [required, decimal(9)]) ?? undefined,
    completion: check(v.completion, [required, decimal(9)]) ?? undefined,
    paramsTotal: check(v.paramsTotal, [number(0, 100_000, { exclusiveMin: true })], true) ?? undefined,
    paramsActive: check(v.paramsActive, [number(0, 100_000, { exclusiveMin: true })], true) ?? undefined,
    pue: check(v.pue, [number(1, 3)], true) ?? undefined,
    latency: simulator ? (check(v.latency, [integer(0, 600_000)]) ?? undefined) : undefined,
    tokensPerSecond: simulator ? (check(v.tokensPerSecond, [number(0, 100_000)]) ?? undefined) : undefined,
    completionTokens: simulator ? (check(v.completionTokens, [integer(1, 100_000)]) ?? undefined) : undefined,
  };
}

/**
 * The provider's fields as a merge patch that also works for creation: a field the chosen type
 * does not have, or an emptied optional one, is null (removed, so its default applies).
 */
export function providerBody(v: Values<ProviderField>, editing: Provider | null): Record<string, unknown> {
  const simulator = v.type === 'simulator';
  const carbonSet = [v.paramsTotal, v.paramsActive, v.zone, v.pue].some((x) => x.trim() !== '');
  const key = v.key !== '' ? v.key : editing && v.clearKey === 'true' ? null : undefined;
  return {
    router: v.router,
    type: v.type,
    model_name: v.model,
    url: simulator ? null : textOrNull(v.url),
    ...(key === undefined ? {} : { key }),
    timeout: numberOrNull(v.timeout),
    retries: numberOrNull(v.retries),
    health_check: !simulator && v.healthCheck === 'true' ? { enabled: true, interval_seconds: Number(v.healthInterval) } : null,
    max_concurrent: numberOrNull(v.maxConcurrent),
    carbon: carbonSet
      ? {
          params_total_b: numberOrNull(v.paramsTotal),
          params_active_b: numberOrNull(v.paramsActive),
          zone: textOrNull(v.zone),
          pue: numberOrNull(v.pue),
        }
      : null,
    simulator: simulator
      ? { latency_ms: Number(v.latency), tokens_per_second: Number(v.tokensPerSecond), completion_tokens: Number(v.completionTokens) }
      : null,
  };
}
