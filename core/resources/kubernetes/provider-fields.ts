// How a provider (provider.ts) appears in a ModelProvider: the field table its spec schema and its
// translation both ways are derived from (field-table.ts). Each field is the provider's own under
// its camelCase name, but for what Kubernetes holds elsewhere: the id is the object's namespace and
// name, the router a reference to a ModelRouter, the API key a reference to a Secret (the key
// itself never enters a spec), and the settings of one kind are optional for all.
import { z } from 'zod';
import { checkZoneFactor } from '../carbon.ts';
import { BaseUrl } from '../fields.ts';
import { DEFAULT_URLS, PROVIDER_KINDS, PROVIDER_TYPES, URL_REQUIRED } from '../kinds.ts';
import { ProviderSpec } from '../provider.ts';
import { SERVICE_REF_FIELDS } from '../service-ref.ts';
import { crossField, fieldTable } from './field-table.ts';
import { ObjectName, SecretKey } from './kube-fields.ts';

export const PROVIDER_FIELDS = fieldTable(ProviderSpec, {
  // `<namespace>-<name>` (translate.ts providerId), which the caller gives.
  id: { kind: 'given', at: ['metadata', 'name'] },
  // Read as the name clients call of the router referred to, which the caller resolved.
  router: {
    kind: 'given',
    cr: 'routerRef',
    schema: z
      .strictObject({ name: ObjectName.describe('metadata.name of the ModelRouter.') })
      .describe('The ModelRouter this provider serves, in the same namespace.'),
    at: ['spec', 'routerRef', 'name'],
  },
  type: { cr: 'type', schema: z.enum(PROVIDER_TYPES).describe('Backend API kind; decides how requests are sent to the backend.') },
  model_name: 'model',
  url: {
    cr: 'url',
    schema: z
      .string()
      .max(2048, 'must be at most 2048 characters')
      .regex(/^https?:\/\/\S+$/, 'must be an absolute http:// or https:// URL')
      .pipe(BaseUrl)
      .optional()
      .describe(
        `Base address of the backend, without /v1. Required for ${listed(URL_REQUIRED)}; ${listed(Object.keys(DEFAULT_URLS))} default to their usual address; ${listed(PROVIDER_TYPES.filter((type) => PROVIDER_KINDS[type].url === 'none'))} takes none.`,
      ),
  },
  // Several replicas of one engine, as in a file or through the admin API.
  urls: 'urls',
  // The replicas as a Service's ready endpoints: the CR names a Service of its own namespace, which
  // the caller adds on reading (translate.ts) and leaves out on writing.
  service_ref: {
    kind: 'given',
    cr: 'serviceRef',
    schema: z
      .strictObject(SERVICE_REF_FIELDS)
      .optional()
      .describe(
        'A Service of this namespace whose ready endpoints are the replicas, in place of url or urls (types vllm and tei): the gateways follow its EndpointSlices and serve one replica per ready address, at the port given (by number or name).',
      ),
  },
  // Never read (keys travel apart from resources); written as the Secret the caller put it in.
  key: {
    kind: 'given',
    cr: 'apiKeySecretRef',
    schema: z
      .strictObject({
        name: ObjectName.describe('Name of the Secret, in the same namespace.'),
        key: SecretKey.describe("Key of the API key in the Secret's data."),
      })
      .optional()
      .describe("Where the backend's API key is: a key of a Secret in the same namespace. Absent: requests go without a key."),
  },
  timeout: 'timeoutSeconds',
  timeouts: 'timeouts',
  retries: 'retries',
  health_check: 'healthCheck',
  max_concurrent: 'maxConcurrent',
  saturation: { cr: 'saturation', optional: true, describe: 'When a replica counts as saturated, from its /metrics; only for type vllm.' },
  forward_priority: {
    cr: 'forwardPriority',
    optional: true,
    describe: "Send the caller's priority to the engine as vLLM's per-request priority; only for type vllm.",
  },
  carbon: {
    cr: 'carbon',
    refine: crossField(checkZoneFactor),
    describe: 'Inputs of the carbon estimate of requests served by this provider; without a parameter count it reports 0.',
  },
  simulator: { cr: 'simulator', optional: true, describe: 'Behaviour of the built-in simulator; only for type simulator.' },
});

/** `a, b and c`, for prose written from a list. */
function listed(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}
